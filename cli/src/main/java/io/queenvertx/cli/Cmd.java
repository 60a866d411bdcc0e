package io.queenvertx.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** A qvctl command: the settings, the broker and the output of the one run it belongs to. */
abstract class Cmd implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  private Settings settings;
  private Broker broker;

  Qvctl root() {
    return (Qvctl) spec.root().userObject();
  }

  Settings settings() {
    if (settings == null) settings = root().settings();
    return settings;
  }

  Broker broker() {
    if (broker == null) broker = new Broker(settings());
    return broker;
  }

  Out out() {
    return new Out(root().out, settings().json());
  }

  /** A line on standard error (notes and progress never mix with the output a script parses). */
  void note(String line) {
    root().err.println(line);
    root().err.flush();
  }

  @Override
  public Integer call() throws Exception {
    return run();
  }

  abstract int run() throws Exception;

  /** {@code value} as JSON with {@code --output json}, else what {@code human} prints; exit 0. */
  int print(Object value, java.util.function.Consumer<Out> human) {
    Out o = out();
    if (o.json()) o.json(value);
    else human.accept(o);
    return Exit.OK;
  }

  /** The refusal of a destructive command run without {@code --yes}. */
  static Exit.Failure needsYes(String what) {
    return new Exit.Failure(Exit.USAGE, what + ": add --yes to confirm");
  }
}
