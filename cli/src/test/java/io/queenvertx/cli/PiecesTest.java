package io.queenvertx.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The parts of qvctl that need no broker: status to exit code, paths, the pop query, tables and the progress bar. */
class PiecesTest {
  @Test
  void statusesMapToTheDocumentedExitCodes() {
    assertThat(Exit.ofStatus(400)).isEqualTo(2);
    assertThat(Exit.ofStatus(415)).isEqualTo(2);
    assertThat(Exit.ofStatus(401)).isEqualTo(4);
    assertThat(Exit.ofStatus(403)).isEqualTo(4);
    assertThat(Exit.ofStatus(404)).isEqualTo(3);
    assertThat(Exit.ofStatus(409)).isEqualTo(6);
    assertThat(Exit.ofStatus(500)).isEqualTo(1);
    assertThat(Exit.ofStatus(503)).isEqualTo(1);
  }

  @Test
  void pathSegmentsEscapeAllButUnreservedCharacters() {
    assertThat(Broker.seg("orders.eu-1_x~")).isEqualTo("orders.eu-1_x~");
    assertThat(Broker.seg("a b/c?é")).isEqualTo("a%20b%2Fc%3F%C3%A9");
    assertThat(Broker.query("a", 1, "skip", null, "b", "x y")).isEqualTo("?a=1&b=x%20y");
    assertThat(Broker.query("skip", null)).isEmpty();
  }

  @Test
  void fromChoosesTheSubscriptionOfANewGroup() {
    assertThat(PopCommand.query("g", 5, true, 100, false, null, "new"))
        .isEqualTo("?batch=5&wait=true&timeout=100&consumerGroup=g&subscriptionMode=new");
    assertThat(PopCommand.query("g", 5, false, 100, true, 30, "all"))
        .isEqualTo("?batch=5&wait=false&autoAck=true&consumerGroup=g&leaseSeconds=30&subscriptionMode=all");
    assertThat(PopCommand.query(null, 1, false, 0, false, null, "2026-01-02T03:04:05Z"))
        .endsWith("&subscriptionFrom=2026-01-02T03%3A04%3A05Z");
    assertThat(PopCommand.query(null, 1, false, 0, false, null, "now")).endsWith("&subscriptionFrom=now");
    assertThatThrownBy(() -> PopCommand.query(null, 1, false, 0, false, null, "yesterday"))
        .isInstanceOf(Exit.Failure.class).hasMessageContaining("--from");
  }

  @Test
  void tablesAlignColumnsAndCutLongCells() {
    StringWriter s = new StringWriter();
    new Out(new PrintWriter(s), false).table(List.of("name", "data"),
        List.of(List.of("a", Map.of("k", 1)), List.of("longer", "x".repeat(100))));
    List<String> lines = s.toString().lines().toList();
    assertThat(lines.get(0)).isEqualTo("NAME    DATA");
    assertThat(lines.get(1)).isEqualTo("a       {\"k\":1}");
    assertThat(lines.get(2)).startsWith("longer  xxx").endsWith("…").hasSize(8 + Out.MAX_CELL);
  }

  @Test
  void theProgressBarFillsWithTheMovedRows() {
    StringWriter s = new StringWriter();
    Progress p = new Progress(new PrintWriter(s), "lines", 40);
    p.update(task("running", 10, 0), 1_000);
    p.update(task("running", 10, 0), 1_200); // unchanged: no new line
    p.update(task("running", 30, 0), 2_000);
    p.update(task("completed", 39, 1), 2_500);
    List<String> lines = s.toString().lines().toList();
    assertThat(lines).hasSize(3);
    assertThat(lines.get(0)).startsWith("[" + "#".repeat(8) + "-".repeat(22) + "]  25%  10/40  running");
    assertThat(lines.get(1)).contains(" 75%  30/40", "20/s");
    assertThat(lines.get(2)).startsWith("[" + "#".repeat(30) + "] 100%  40/40  completed").contains("failed 1");
    assertThat(RedriveCommands.ended(task("completed", 39, 1))).isEqualTo(Exit.PARTIAL);
    assertThat(RedriveCommands.ended(task("completed", 40, 0))).isEqualTo(Exit.OK);
    assertThat(RedriveCommands.ended(task("cancelled", 3, 0))).isEqualTo(Exit.PARTIAL);
    assertThat(RedriveCommands.ended(task("failed", 3, 0))).isEqualTo(Exit.ERROR);
  }

  private static Map<String, Object> task(String status, long moved, long failed) {
    return Map.of("status", status, "moved", moved, "duplicate", 0L, "gone", 0L, "failed", failed);
  }
}
