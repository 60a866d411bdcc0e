package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.TinyDisk;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The spool on a real full disk (a small tmpfs; needs root, skipped otherwise): an append the disk refused, partly
 * written or not at all, leaves nothing of itself in the spool, so an item answered {@code failed} can never be
 * replayed, the appends after it (once there is room again) stay readable, and the pending count is exactly what the
 * files hold.
 */
class SpoolDiskFullTest {
  static final String TENANT = "00000000-0000-0000-0000-000000000001";
  /** About 1.5 KB per event, 4 events per append: the disk runs out in the middle of an append, not between two. */
  static final String PAYLOAD = "{\"pad\":\"" + "x".repeat(1500) + "\"}";

  static List<Spool.Event> batch(int n) {
    List<Spool.Event> events = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      events.add(new Spool.Event(TENANT, "q", "p", "b" + n + "-" + i, "producer", false,
          PAYLOAD.getBytes(StandardCharsets.UTF_8)));
    }
    return events;
  }

  @Test
  void anAppendTheFullDiskRefusedLeavesNothingAndTheAppendsAfterItStayReadable() throws Exception {
    try (var disk = TinyDisk.mount(256)) {
      Path room = disk.reserve("room", 64);
      Path dir = disk.dir().resolve("spool");
      var spool = new Spool(dir, 1_000_000);
      List<String> kept = new ArrayList<>();
      int n = 0;
      int refused = 0;
      while (refused < 3) {
        List<Spool.Event> events = batch(n++);
        try {
          spool.append(events);
          for (Spool.Event e : events) kept.add(e.transactionId());
        } catch (IOException full) {
          refused++;
        }
      }
      int keptWhileFull = kept.size();
      assertThat(keptWhileFull).as("appends taken before the disk filled").isPositive();
      assertThat(spool.pendingEvents()).isEqualTo(keptWhileFull);
      assertThat(onDisk(dir)).as("what a replay would find now: the appends taken, none refused")
          .containsExactlyElementsOf(kept);

      // room again: the next appends are taken, after the refused ones
      Files.delete(room);
      for (int i = 0; i < 5; i++) {
        List<Spool.Event> events = batch(n++);
        spool.append(events);
        for (Spool.Event e : events) kept.add(e.transactionId());
      }
      spool.rotate();

      assertThat(spool.sealed()).hasSize(1);
      assertThat(onDisk(dir)).as("the spool holds exactly the appends it took, in order")
          .containsExactlyElementsOf(kept);
      assertThat(spool.pendingEvents()).isEqualTo(kept.size());
      // and a restart counts the same
      assertThat(new Spool(dir, 1_000_000).pendingEvents()).isEqualTo(kept.size());
    }
  }

  /** The transaction ids of every record in the spool's files (active or sealed), in file order. */
  static List<String> onDisk(Path dir) throws IOException {
    List<String> txns = new ArrayList<>();
    try (var files = Files.list(dir)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".tmp") || p.toString().endsWith(".buf")).sorted()
          .toList()) {
        for (Spool.Event e : Spool.read(f)) txns.add(e.transactionId());
      }
    }
    return txns;
  }
}
