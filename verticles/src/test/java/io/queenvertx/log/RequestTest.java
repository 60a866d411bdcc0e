package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushOutcome;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** How a request's outcomes are filled in: answered once, followers copying their leader's verdict. */
class RequestTest {
  static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-00000000000b");

  @Test
  void aRequestIsAnsweredOnceWhenItsLastLeaderIsResolvedAndFollowersCopyTheirLeader() {
    AtomicReference<List<PushOutcome>> out = new AtomicReference<>();
    AtomicInteger answers = new AtomicInteger();
    var req = new Request(new PushCommand(TENANT, null, List.of(SpoolerTest.item("a"), SpoolerTest.item("a"),
        SpoolerTest.item("b"))), o -> {
          answers.incrementAndGet();
          out.set(o);
        }, false);
    req.leaderOf[0] = 0;
    req.leaderOf[1] = 0; // the same transaction id within the request follows item 0
    req.leaderOf[2] = 2;
    req.outstanding = 2;
    Slot a = SpoolerTest.slot(req, 0, "a");
    Slot b = SpoolerTest.slot(req, 2, "b");
    UUID pid = UUID.randomUUID();
    a.resolve("queued", pid, 7, null);
    assertThat(answers).hasValue(0);
    b.fail();
    assertThat(answers).hasValue(1);
    assertThat(out.get()).extracting(PushOutcome::status).containsExactly("queued", "duplicate", "failed");
    assertThat(out.get().get(1).messageId()).isEqualTo(a.frame.messageId());
    assertThat(out.get().get(1).offset()).isEqualTo(7);
    assertThat(out.get().get(2).messageId()).isEqualTo(b.frame.messageId());
  }

  @Test
  void aFailedLeaderFailsItsFlushFollowersAndItsInRequestFollowers() {
    AtomicReference<List<PushOutcome>> first = new AtomicReference<>();
    AtomicReference<List<PushOutcome>> second = new AtomicReference<>();
    var r1 = new Request(new PushCommand(TENANT, null, List.of(SpoolerTest.item("x"), SpoolerTest.item("x"))),
        first::set, false);
    r1.leaderOf[1] = 0;
    r1.outstanding = 1;
    var r2 = new Request(new PushCommand(TENANT, null, List.of(SpoolerTest.item("x"))), second::set, false);
    r2.outstanding = 1;
    Slot lead = SpoolerTest.slot(r1, 0, "x");
    Slot other = SpoolerTest.slot(r2, 0, "x");
    lead.flushFollowers.add(other);
    lead.fail();
    assertThat(first.get()).extracting(PushOutcome::status).containsExactly("failed", "failed");
    assertThat(second.get()).extracting(PushOutcome::status).containsExactly("failed");
    assertThat(second.get().get(0).messageId()).isEqualTo(other.frame.messageId());
  }

  @Test
  void aFlushFollowerOfAStoredFrameIsItsDuplicate() {
    AtomicReference<List<PushOutcome>> second = new AtomicReference<>();
    var r1 = new Request(new PushCommand(TENANT, null, List.of(SpoolerTest.item("y"))), o -> { }, false);
    r1.outstanding = 1;
    var r2 = new Request(new PushCommand(TENANT, null, List.of(SpoolerTest.item("y"))), second::set, false);
    r2.outstanding = 1;
    Slot lead = SpoolerTest.slot(r1, 0, "y");
    Slot other = SpoolerTest.slot(r2, 0, "y");
    lead.flushFollowers.add(other);
    UUID pid = UUID.randomUUID();
    lead.resolve("queued", pid, 3, null);
    assertThat(second.get()).singleElement().satisfies(o -> {
      assertThat(o.status()).isEqualTo("duplicate");
      assertThat(o.messageId()).isEqualTo(lead.frame.messageId());
      assertThat(o.partitionId()).isEqualTo(pid);
      assertThat(o.offset()).isEqualTo(3);
    });
  }
}
