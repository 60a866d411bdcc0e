package io.queenvertx.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/** qvctl: the operator's command line for queen-vertx (and Queen) brokers, over their HTTP API. */
@Command(name = "qvctl", mixinStandardHelpOptions = true, versionProvider = Qvctl.Version.class,
    description = "Operate a queen-vertx (or Queen) broker over its HTTP API.",
    subcommands = {QueueCommands.class, PushCommand.class, PopCommand.class, PeekCommand.class, AckCommand.class,
        TailCommand.class, DlqCommands.class, RedriveCommands.class, GroupCommands.class, LagCommand.class,
        StatusCommand.class, CompletionCommand.class, CommandLine.HelpCommand.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
        " 0:ok", " 1:error: the broker failed (5xx, maintenance refusal) or answered something unexpected",
        " 2:usage: bad flag or argument, missing --yes, or a request the broker refused as malformed (400/413/415)",
        " 3:not found (404)", " 4:auth: 401 or 403", " 5:unreachable: no connection to the broker",
        " 6:conflict (409: a redrive already runs for the queue)",
        " 7:partial: only part of the work was taken (failed push item, ack not taken, dead letter gone, "
            + "redrive cancelled or with failed rows)"},
    footer = {"%nSettings: flags > QVCTL_URL, QVCTL_TOKEN, QVCTL_TENANT, QVCTL_OUTPUT > config file "
        + "(--config, QVCTL_CONFIG, ~/.config/qvctl/config: key=value lines) > defaults."})
public final class Qvctl {
  @Option(names = "--url", scope = ScopeType.INHERIT, paramLabel = "URL",
      description = "Broker base URL (default http://localhost:6632)")
  String url;

  @Option(names = "--token", scope = ScopeType.INHERIT, paramLabel = "JWT", description = "Bearer token")
  String token;

  @Option(names = "--tenant", scope = ScopeType.INHERIT, paramLabel = "UUID", description = "x-queen-tenant header")
  String tenant;

  @Option(names = {"-o", "--output"}, scope = ScopeType.INHERIT, paramLabel = "table|json",
      description = "Output format (default table)")
  String output;

  @Option(names = "--config", scope = ScopeType.INHERIT, paramLabel = "FILE", description = "Config file")
  String config;

  final InputStream in;
  final PrintWriter out;
  final PrintWriter err;
  final Map<String, String> env;
  final String home;
  /** Whether standard error is a terminal (the progress bar redraws one line there). */
  final boolean errIsTerminal;

  Qvctl(InputStream in, PrintWriter out, PrintWriter err, Map<String, String> env, String home, boolean tty) {
    this.in = in;
    this.out = out;
    this.err = err;
    this.env = env;
    this.home = home;
    this.errIsTerminal = tty;
  }

  Settings settings() {
    Map<String, String> flags = new HashMap<>();
    if (url != null) flags.put("url", url);
    if (token != null) flags.put("token", token);
    if (tenant != null) flags.put("tenant", tenant);
    if (output != null) flags.put("output", output);
    if (config != null) flags.put("config", config);
    return Settings.resolve(flags, env, home);
  }

  public static void main(String[] args) {
    boolean tty = "1".equals(System.getProperty("qvctl.tty"));
    System.exit(run(args, System.in, System.out, System.err, System.getenv(), System.getProperty("user.home"), tty));
  }

  /** One run of the command line; its exit code. */
  public static int run(String[] args, InputStream in, PrintStream out, PrintStream err, Map<String, String> env,
      String home, boolean tty) {
    PrintWriter o = new PrintWriter(out, true, StandardCharsets.UTF_8);
    PrintWriter e = new PrintWriter(err, true, StandardCharsets.UTF_8);
    CommandLine cl = commandLine(new Qvctl(in, o, e, env, home, tty));
    cl.setOut(o);
    cl.setErr(e);
    int code = cl.execute(args);
    o.flush();
    e.flush();
    return code;
  }

  static CommandLine commandLine(Qvctl root) {
    CommandLine cl = new CommandLine(root);
    cl.setExecutionExceptionHandler((ex, line, parsed) -> {
      if (ex instanceof Exit.Failure f) {
        line.getErr().println("qvctl: " + f.getMessage());
        return f.code;
      }
      line.getErr().println("qvctl: " + ex);
      return Exit.ERROR;
    });
    cl.setParameterExceptionHandler((ex, args) -> {
      CommandLine c = ex.getCommandLine();
      c.getErr().println("qvctl: " + ex.getMessage());
      c.getErr().println("Try '" + c.getCommandSpec().qualifiedName() + " --help'.");
      return Exit.USAGE;
    });
    return cl;
  }

  /** qvctl's version, from the properties the build filters. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"qvctl " + version()};
    }
  }

  static String version() {
    Properties p = new Properties();
    try (var s = Qvctl.class.getResourceAsStream("qvctl.properties")) {
      if (s != null) p.load(s);
    } catch (IOException ignored) {
      // no properties: unknown version
    }
    return p.getProperty("version", "unknown");
  }
}
