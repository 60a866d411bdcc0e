package io.queenvertx.dashboard;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedCondition;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * A headless Debian Chromium driven through Debian's chromedriver (never a downloaded one: Selenium Manager is not
 * consulted because both paths are given). Waits are on DOM conditions only. The browser runs in {@link #ZONE}, not
 * the machine's zone, so the tests see the dashboard convert times to a zone other than UTC.
 *
 * <p>One Chromium per test JVM serves the dashboard classes in turn (a launch costs about two seconds): each class
 * gets it pointed at its own node, and {@link #close} leaves it blank, with the class's cookies and storage gone; it is
 * quit when the JVM exits, and launched again should it have died.
 */
final class Browser implements AutoCloseable {
  static final Duration WAIT = Duration.ofSeconds(30);
  /** The browser's time zone. */
  static final String ZONE = "America/New_York";
  private static ChromeDriver shared;

  final ChromeDriver driver;
  private final String base;

  private Browser(ChromeDriver driver, String base) {
    this.driver = driver;
    this.base = base;
  }

  static synchronized Browser open(String baseUrl) {
    if (shared != null && !alive(shared)) shared = null;
    if (shared == null) shared = launch();
    return new Browser(shared, baseUrl);
  }

  private static boolean alive(ChromeDriver d) {
    try {
      d.getWindowHandle();
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  private static ChromeDriver launch() {
    String chromium = firstExisting("/usr/bin/chromium", "/usr/bin/chromium-browser");
    String chromedriver = firstExisting("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver");
    try {
      Path profile = Files.createTempDirectory("queen-chromium");
      ChromeOptions o = new ChromeOptions();
      o.setBinary(chromium);
      o.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
          "--window-size=1400,1000", "--user-data-dir=" + profile, "--no-first-run", "--disable-extensions");
      ChromeDriverService service = new ChromeDriverService.Builder()
          .usingDriverExecutable(new File(chromedriver)).usingAnyFreePort()
          .withEnvironment(java.util.Map.of("TZ", ZONE)).build();
      ChromeDriver driver = new ChromeDriver(service, o);
      Runtime.getRuntime().addShutdownHook(new Thread(() -> {
        try {
          driver.quit();
        } catch (RuntimeException ignored) {
          // the browser is gone already
        }
        try (var walk = Files.walk(profile)) {
          walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
          // a leftover temp profile is harmless
        }
      }, "chromium-quit"));
      return driver;
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String firstExisting(String... paths) {
    for (String p : paths) if (new File(p).canExecute()) return p;
    throw new IllegalStateException("not installed (apt-get install -y chromium chromium-driver): " + List.of(paths));
  }

  /** Opens a client-side route, e.g. {@code "dlq?queue=x"} (hash routing). */
  void page(String route) {
    // via about:blank, so the app starts afresh even when only the hash differs from the current page
    driver.get("about:blank");
    driver.get(base + "/#/" + route);
  }

  void url(String path) {
    driver.get(base + path);
  }

  /** Polls until the condition holds; an element the page re-rendered between finding and reading is looked up again. */
  <T> T until(ExpectedCondition<T> condition) {
    return new WebDriverWait(driver, WAIT).pollingEvery(Duration.ofMillis(50))
        .ignoring(org.openqa.selenium.StaleElementReferenceException.class).until(condition);
  }

  WebElement waitFor(String css) {
    return until(d -> {
      var found = d.findElements(By.cssSelector(css));
      return found.isEmpty() || !found.get(0).isDisplayed() ? null : found.get(0);
    });
  }

  void waitGone(String css) {
    until(d -> d.findElements(By.cssSelector(css)).isEmpty());
  }

  void waitText(String css, String contains) {
    until(d -> {
      var found = d.findElements(By.cssSelector(css));
      return !found.isEmpty() && found.get(0).getText().contains(contains);
    });
  }

  List<WebElement> all(String css) {
    return driver.findElements(By.cssSelector(css));
  }

  Object js(String script, Object... args) {
    return ((JavascriptExecutor) driver).executeScript(script, args);
  }

  /** Saves a screenshot under the repository's docs/screenshots/. */
  void screenshot(String name) {
    Path cwd = Path.of("").toAbsolutePath();
    Path root = cwd.getFileName() != null && cwd.getFileName().toString().equals("verticles") ? cwd.getParent() : cwd;
    Path dir = root.resolve("docs/screenshots");
    try {
      Files.createDirectories(dir);
      File shot = driver.getScreenshotAs(OutputType.FILE);
      Files.copy(shot.toPath(), dir.resolve(name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Leaves the shared browser blank, without this class's cookies and storage (the next class has its own node). */
  @Override
  public void close() {
    try {
      driver.switchTo().alert().dismiss();
    } catch (RuntimeException noAlert) {
      // the usual case
    }
    try {
      js("window.localStorage.clear(); window.sessionStorage.clear();");
    } catch (RuntimeException noStorage) {
      // a blank page has none
    }
    try {
      driver.manage().deleteAllCookies();
      driver.get("about:blank");
    } catch (RuntimeException e) {
      synchronized (Browser.class) {
        if (shared == driver) shared = null; // broken: the next class launches another
      }
      try {
        driver.quit();
      } catch (RuntimeException ignored) {
        // already gone
      }
    }
  }
}
