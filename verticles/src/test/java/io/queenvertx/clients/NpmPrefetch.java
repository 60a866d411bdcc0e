package io.queenvertx.clients;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Starts the three {@code npm ci} installs the client tests need (Queen's JS client 1.0.6 in {@code clients-test/js}
 * and 2.0.3 in {@code clients-test/js2}, Redocly in {@code clients-test/openapi}) on a background thread as soon as a
 * test JVM opens its JUnit session, so that on a clean clone they download while other test classes run instead of
 * when {@link JsClientIT}, {@link JsClient2IT} and {@link OpenApiLintIT} start. Those tests install again through the same calls, which wait for an install under way
 * and then find the tree installed; a failure here is theirs to report. Registered in
 * {@code META-INF/services/org.junit.platform.launcher.LauncherSessionListener}.
 */
public final class NpmPrefetch implements LauncherSessionListener {
  private static volatile boolean started;

  @Override
  public void launcherSessionOpened(LauncherSession session) {
    if (started) return;
    started = true;
    Thread t = new Thread(() -> {
      try {
        JsClientProject.find().install();
        JsClient2IT.project().install();
        JsClientProject.find("clients-test/openapi").ci();
      } catch (Exception | Error e) {
        // the client tests install again and fail with npm's output
      }
    }, "npm-prefetch");
    t.setDaemon(true);
    t.setPriority(Thread.MIN_PRIORITY);
    t.start();
  }
}
