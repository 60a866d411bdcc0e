package io.queenvertx.kernel;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Where the external PostgreSQL is, read the way libpq reads it: {@code PG_URL}, a URI
 * {@code postgresql://user:password@h1:p1,h2:p2/database?target_session_attrs=read-write&sslmode=require}, and the
 * {@code PG_*} variables. What the URI gives wins; what it leaves out comes from the variables, then the defaults.
 *
 * <p>{@code PG_HOST} is one host or a comma-separated list; {@code PG_PORT} one port, which applies to every host
 * (libpq's rule), or one per host. {@code PG_TARGET_SESSION_ATTRS} (or the URI's {@code target_session_attrs}) is
 * {@code read-write} (alias {@code primary}) or {@code any}; unset, it is {@code read-write} when more than one host is
 * given and {@code any} for one. {@code PG_READ_HOSTS} (alias {@code PG_READ_HOST}) lists read replicas as
 * {@code host} or {@code host:port} ({@code PG_READ_PORT}, else the first server's port, for those without one).
 * Anything malformed is a {@link ConfigException} naming the variable.
 */
final class PgLocation {
  static final Set<String> URL_PARAMETERS = Set.of("target_session_attrs", "sslmode");

  private PgLocation() {}

  /** The configured external PostgreSQL; empty when neither {@code PG_URL} nor {@code PG_HOST} is set. */
  static Optional<Config.Database> database(ConfigReader e) {
    String url = e.raw("PG_URL");
    if (url.isEmpty() && e.raw("PG_HOST").isEmpty()) return Optional.empty();
    Uri uri = url.isEmpty() ? Uri.EMPTY : Uri.parse(url);
    int defaultPort = uri.hosts.isEmpty() ? 5432 : singlePort(e);
    List<Config.Host> hosts = uri.hosts.isEmpty() ? hosts(e) : uri.withPorts(defaultPort);
    String database = uri.database != null ? uri.database : e.str("PG_DATABASE", "");
    if (database.isEmpty()) database = e.str("PG_DB", "postgres");
    String user = uri.user != null ? uri.user : e.str("PG_USER", "postgres");
    String password = uri.password != null ? uri.password : e.untrimmed("PG_PASSWORD", "postgres");
    boolean ssl = uri.params.containsKey("sslmode") ? ssl(uri.params.get("sslmode")) : e.bool("PG_USE_SSL", false);
    String attrs = uri.params.containsKey("target_session_attrs") ? uri.params.get("target_session_attrs")
        : e.raw("PG_TARGET_SESSION_ATTRS");
    String variable = uri.params.containsKey("target_session_attrs") ? "PG_URL" : "PG_TARGET_SESSION_ATTRS";
    return Optional.of(new Config.Database(hosts, database, user, password, ssl, target(variable, attrs, hosts)));
  }

  /** The read replicas of {@code PG_READ_HOSTS}; empty when unset. */
  static List<Config.Host> readHosts(ConfigReader e, Optional<Config.Database> db) {
    String var = e.raw("PG_READ_HOSTS").isEmpty() ? "PG_READ_HOST" : "PG_READ_HOSTS";
    String list = e.raw(var);
    if (list.isEmpty()) return List.of();
    if (db.isEmpty()) throw ConfigException.of(var, list, "read replicas need an external PostgreSQL (PG_HOST or PG_URL)");
    int port = e.integer("PG_READ_PORT", db.get().port(), 1, 65535);
    List<Config.Host> out = new ArrayList<>();
    for (String item : list.split(",", -1)) {
      String s = item.trim();
      if (s.isEmpty()) throw ConfigException.of(var, list, "a comma-separated list of host or host:port");
      out.add(hostPort(var, list, s, port));
    }
    return List.copyOf(out);
  }

  private static List<Config.Host> hosts(ConfigReader e) {
    String hostList = e.raw("PG_HOST");
    String[] names = hostList.split(",", -1);
    String portList = e.raw("PG_PORT");
    String[] ports = portList.isEmpty() ? new String[] {"5432"} : portList.split(",", -1);
    if (ports.length != 1 && ports.length != names.length) {
      throw ConfigException.of("PG_PORT", portList, "one port for every host, or one per host (PG_HOST lists "
          + names.length + ")");
    }
    List<Config.Host> out = new ArrayList<>();
    for (int i = 0; i < names.length; i++) {
      String name = names[i].trim();
      if (name.isEmpty()) throw ConfigException.of("PG_HOST", hostList, "a host or a comma-separated list of hosts");
      out.add(new Config.Host(unbracket(name), port("PG_PORT", portList, ports[ports.length == 1 ? 0 : i])));
    }
    return out;
  }

  /** {@code PG_PORT} when it is one port (the default of a URI host without one), else 5432. */
  private static int singlePort(ConfigReader e) {
    String p = e.raw("PG_PORT");
    return p.isEmpty() || p.contains(",") ? 5432 : port("PG_PORT", p, p);
  }

  static Config.Target target(String variable, String value, List<Config.Host> hosts) {
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "" -> hosts.size() > 1 ? Config.Target.READ_WRITE : Config.Target.ANY;
      case "read-write", "primary" -> Config.Target.READ_WRITE;
      case "any" -> Config.Target.ANY;
      default -> throw ConfigException.of(variable, value, "target_session_attrs read-write, primary or any");
    };
  }

  private static boolean ssl(String mode) {
    return switch (mode) {
      case "disable", "allow", "prefer" -> false;
      case "require", "verify-ca", "verify-full" -> true;
      default -> throw ConfigException.of("PG_URL", "sslmode=" + mode,
          "sslmode disable, allow, prefer, require, verify-ca or verify-full");
    };
  }

  private static int port(String var, String whole, String text) {
    try {
      int p = Integer.parseInt(text.trim());
      if (p >= 1 && p <= 65535) return p;
    } catch (NumberFormatException ignored) {
      // reported below
    }
    throw ConfigException.of(var, whole, "ports from 1 to 65535 (one, or a comma-separated list)");
  }

  /** {@code host}, {@code host:port}, {@code [v6]} or {@code [v6]:port}. */
  private static Config.Host hostPort(String var, String whole, String s, int defaultPort) {
    if (s.startsWith("[")) {
      int close = s.indexOf(']');
      if (close < 0) throw ConfigException.of(var, whole, "an IPv6 address in brackets");
      String rest = s.substring(close + 1);
      if (!rest.isEmpty() && !rest.startsWith(":")) throw ConfigException.of(var, whole, "[address]:port");
      return new Config.Host(s.substring(1, close), rest.isEmpty() ? defaultPort : port(var, whole, rest.substring(1)));
    }
    int colon = s.lastIndexOf(':');
    if (colon < 0) return new Config.Host(s, defaultPort);
    if (s.indexOf(':') != colon) return new Config.Host(s, defaultPort); // a bare IPv6 address
    return new Config.Host(s.substring(0, colon), port(var, whole, s.substring(colon + 1)));
  }

  private static String unbracket(String h) {
    return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
  }

  /** The parts of a libpq URI; null where the URI has nothing. */
  private record Uri(List<String> hosts, String user, String password, String database, Map<String, String> params) {
    static final Uri EMPTY = new Uri(List.of(), null, null, null, Map.of());

    static Uri parse(String url) {
      String rest;
      if (url.startsWith("postgresql://")) rest = url.substring("postgresql://".length());
      else if (url.startsWith("postgres://")) rest = url.substring("postgres://".length());
      else throw ConfigException.of("PG_URL", redacted(url), "a URI starting postgresql:// or postgres://");
      Map<String, String> params = new LinkedHashMap<>();
      int q = rest.indexOf('?');
      if (q >= 0) {
        for (String pair : rest.substring(q + 1).split("&")) {
          if (pair.isEmpty()) continue;
          int eq = pair.indexOf('=');
          String k = decode(eq < 0 ? pair : pair.substring(0, eq));
          if (!URL_PARAMETERS.contains(k)) {
            throw ConfigException.of("PG_URL", redacted(url), "parameters " + String.join(", ",
                URL_PARAMETERS.stream().sorted().toList()) + " (not " + k + ")");
          }
          params.put(k, eq < 0 ? "" : decode(pair.substring(eq + 1)));
        }
        rest = rest.substring(0, q);
      }
      String database = null;
      int slash = rest.indexOf('/');
      if (slash >= 0) {
        String d = decode(rest.substring(slash + 1));
        database = d.isEmpty() ? null : d;
        rest = rest.substring(0, slash);
      }
      String user = null;
      String password = null;
      int at = rest.lastIndexOf('@');
      if (at >= 0) {
        String cred = rest.substring(0, at);
        int colon = cred.indexOf(':');
        user = decode(colon < 0 ? cred : cred.substring(0, colon));
        if (colon >= 0) password = decode(cred.substring(colon + 1));
        if (user.isEmpty()) user = null;
        rest = rest.substring(at + 1);
      }
      List<String> hosts = new ArrayList<>();
      if (!rest.isEmpty()) {
        for (String h : rest.split(",", -1)) {
          if (h.isEmpty()) throw ConfigException.of("PG_URL", redacted(url), "host[:port] items separated by commas");
          hosts.add(decode(h));
        }
      }
      return new Uri(hosts, user, password, database, params);
    }

    List<Config.Host> withPorts(int defaultPort) {
      List<Config.Host> out = new ArrayList<>();
      for (String h : hosts) out.add(hostPort("PG_URL", "postgresql://...", h, defaultPort));
      return out;
    }

    private static String decode(String s) {
      return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** The URI with its password masked, for error messages. */
    static String redacted(String url) {
      return url.replaceFirst("(://[^:/@]*:)[^@/]*@", "$1***@");
    }
  }
}
