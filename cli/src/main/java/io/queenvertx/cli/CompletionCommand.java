package io.queenvertx.cli;

import picocli.AutoComplete;
import picocli.CommandLine.Command;

/** {@code qvctl completion}: a bash completion script (zsh loads it through bashcompinit). */
@Command(name = "completion", description = "Print a shell completion script: source <(qvctl completion).")
final class CompletionCommand extends Cmd {
  @Override
  int run() {
    String script = AutoComplete.bash("qvctl", Qvctl.commandLine(new Qvctl(null, null, null, java.util.Map.of(),
        null, false)));
    root().out.print(script);
    root().out.flush();
    return Exit.OK;
  }
}
