package io.queenvertx.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Where the broker is and who speaks to it: each of {@code url}, {@code token}, {@code tenant} and {@code output} comes
 * from its flag, else its environment variable ({@code QVCTL_URL}, {@code QVCTL_TOKEN}, {@code QVCTL_TENANT},
 * {@code QVCTL_OUTPUT}), else the config file, else the default. The config file is {@code --config}, else
 * {@code QVCTL_CONFIG}, else {@code $XDG_CONFIG_HOME/qvctl/config} ({@code ~/.config/qvctl/config}); it holds
 * {@code key=value} lines ({@code #} comments). A file named by flag or variable must exist; the default one may not.
 */
record Settings(String url, String token, String tenant, String output) {
  static final String DEFAULT_URL = "http://localhost:6632";
  static final Set<String> KEYS = Set.of("url", "token", "tenant", "output");

  static Settings resolve(Map<String, String> flags, Map<String, String> env, String home) {
    String explicit = first(flags.get("config"), env.get("QVCTL_CONFIG"));
    Path file;
    if (explicit != null) {
      file = Path.of(explicit);
      if (!Files.isRegularFile(file)) throw new Exit.Failure(Exit.USAGE, "config file " + file + " does not exist");
    } else {
      String xdg = env.get("XDG_CONFIG_HOME");
      Path base = xdg != null && !xdg.isBlank() ? Path.of(xdg) : Path.of(home == null ? "." : home, ".config");
      file = base.resolve("qvctl").resolve("config");
    }
    Map<String, String> fromFile = Files.isRegularFile(file) ? read(file) : Map.of();
    String url = first(flags.get("url"), env.get("QVCTL_URL"), fromFile.get("url"), DEFAULT_URL);
    String output = first(flags.get("output"), env.get("QVCTL_OUTPUT"), fromFile.get("output"), "table");
    if (!output.equals("table") && !output.equals("json")) {
      throw new Exit.Failure(Exit.USAGE, "output must be table or json, not " + output);
    }
    while (url.endsWith("/")) url = url.substring(0, url.length() - 1); // the broker refuses //api/...
    if (!url.startsWith("http://") && !url.startsWith("https://")) {
      throw new Exit.Failure(Exit.USAGE, "url must start with http:// or https://, not " + url);
    }
    return new Settings(url, first(flags.get("token"), env.get("QVCTL_TOKEN"), fromFile.get("token")),
        first(flags.get("tenant"), env.get("QVCTL_TENANT"), fromFile.get("tenant")), output);
  }

  static Map<String, String> read(Path file) {
    Map<String, String> out = new LinkedHashMap<>();
    try {
      int n = 0;
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        n++;
        String l = line.strip();
        if (l.isEmpty() || l.startsWith("#")) continue;
        int eq = l.indexOf('=');
        String key = eq < 0 ? l : l.substring(0, eq).strip();
        if (eq < 0 || !KEYS.contains(key)) {
          throw new Exit.Failure(Exit.USAGE, file + " line " + n + ": expected one of " + KEYS + " as key=value");
        }
        out.put(key, l.substring(eq + 1).strip());
      }
    } catch (IOException e) {
      throw new Exit.Failure(Exit.USAGE, "cannot read config file " + file + ": " + e.getMessage());
    }
    return out;
  }

  private static String first(String... values) {
    for (String v : values) if (v != null && !v.isEmpty()) return v;
    return null;
  }

  boolean json() {
    return "json".equals(output);
  }
}
