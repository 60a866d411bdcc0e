package io.queenvertx.auth;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.auth.AccessLevel.Role;
import io.vertx.core.http.HttpMethod;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;

class AccessLevelTest {
  @Test
  void theRouteTableFollowsApiMdSection24() {
    assertThat(AccessLevel.of(HttpMethod.GET, "/health")).isEqualTo(AccessLevel.PUBLIC);
    assertThat(AccessLevel.of(HttpMethod.GET, "/metrics/prometheus")).isEqualTo(AccessLevel.PUBLIC);
    assertThat(AccessLevel.of(HttpMethod.POST, "/api/v1/push")).isEqualTo(AccessLevel.WRITE_ONLY);
    assertThat(AccessLevel.of(HttpMethod.GET, "/api/v1/pop/queue/q")).isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.of(HttpMethod.GET, "/api/v1/pop")).isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.of(HttpMethod.POST, "/api/v1/ack")).isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.of(HttpMethod.GET, "/api/v1/messages")).isEqualTo(AccessLevel.READ_ONLY);
    assertThat(AccessLevel.of(HttpMethod.DELETE, "/api/v1/messages/p/t")).isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.of(HttpMethod.DELETE, "/api/v1/dlq")).isEqualTo(AccessLevel.ADMIN);
    assertThat(AccessLevel.of(HttpMethod.GET, "/api/v1/dlq")).isEqualTo(AccessLevel.READ_ONLY);
    assertThat(AccessLevel.of(HttpMethod.POST, "/api/v1/dlq/x/replay")).isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.of(HttpMethod.DELETE, "/api/v1/resources/queues/q")).isEqualTo(AccessLevel.ADMIN);
    assertThat(AccessLevel.of(HttpMethod.GET, "/api/v1/system/maintenance")).isEqualTo(AccessLevel.ADMIN);
    assertThat(AccessLevel.of(HttpMethod.GET, "/status")).isEqualTo(AccessLevel.READ_ONLY);
    assertThat(AccessLevel.of(HttpMethod.POST, "/api/v1/unknown")).isEqualTo(AccessLevel.READ_WRITE);
  }

  @Test
  void batchRoutesHoldEachOperationToItsOwnLevel() {
    assertThat(AccessLevel.of(HttpMethod.POST, "/api/v1/kv")).isEqualTo(AccessLevel.READ_ONLY);
    assertThat(AccessLevel.of(HttpMethod.POST, "/api/v1/locks")).isEqualTo(AccessLevel.READ_ONLY);
    assertThat(AccessLevel.of(HttpMethod.POST, "/api/v1/timers")).isEqualTo(AccessLevel.WRITE_ONLY);
    for (String read : new String[] {"get", "getMany", "getPrefix", "check"}) {
      assertThat(AccessLevel.ofOperation("/api/v1/kv", read)).as(read).isEqualTo(AccessLevel.READ_ONLY);
    }
    for (String write : new String[] {"put", "putIfAbsent", "delete", "incr", "nonsense"}) {
      assertThat(AccessLevel.ofOperation("/api/v1/kv", write)).as(write).isEqualTo(AccessLevel.READ_WRITE);
    }
    assertThat(AccessLevel.ofOperation("/api/v1/timers", "schedule")).isEqualTo(AccessLevel.WRITE_ONLY);
    assertThat(AccessLevel.ofOperation("/api/v1/timers", "reschedule")).isEqualTo(AccessLevel.WRITE_ONLY);
    assertThat(AccessLevel.ofOperation("/api/v1/timers", "cancel")).isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.ofOperation("/api/v1/locks", "get")).isEqualTo(AccessLevel.READ_ONLY);
    assertThat(AccessLevel.ofOperation("/api/v1/locks", "acquire")).isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.both(AccessLevel.READ_ONLY, AccessLevel.WRITE_ONLY)).isEqualTo(AccessLevel.READ_WRITE);
    assertThat(AccessLevel.both(AccessLevel.PUBLIC, AccessLevel.WRITE_ONLY)).isEqualTo(AccessLevel.WRITE_ONLY);
    assertThat(AccessLevel.both(AccessLevel.READ_ONLY, AccessLevel.READ_ONLY)).isEqualTo(AccessLevel.READ_ONLY);
    assertThat(AccessLevel.both(AccessLevel.ADMIN, AccessLevel.READ_ONLY)).isEqualTo(AccessLevel.ADMIN);
    // the route's level is the least of its operations': no operation asks for a role the route refused
    for (Role r : Role.values()) {
      for (String op : new String[] {"schedule", "cancel"}) {
        if (AccessLevel.ofOperation("/api/v1/timers", op).satisfiedBy(EnumSet.of(r))) {
          assertThat(AccessLevel.WRITE_ONLY.satisfiedBy(EnumSet.of(r))).isTrue();
        }
      }
    }
  }

  @Test
  void levelsAreRoleSetsNotALadder() {
    assertThat(AccessLevel.WRITE_ONLY.satisfiedBy(EnumSet.of(Role.WRITE_ONLY))).isTrue();
    assertThat(AccessLevel.READ_ONLY.satisfiedBy(EnumSet.of(Role.WRITE_ONLY))).isFalse();
    assertThat(AccessLevel.WRITE_ONLY.satisfiedBy(EnumSet.of(Role.READ_ONLY))).isFalse();
    assertThat(AccessLevel.READ_WRITE.satisfiedBy(EnumSet.of(Role.READ_ONLY, Role.WRITE_ONLY))).isFalse();
    assertThat(AccessLevel.ADMIN.satisfiedBy(EnumSet.of(Role.READ_WRITE))).isFalse();
    assertThat(AccessLevel.ADMIN.satisfiedBy(EnumSet.of(Role.ADMIN))).isTrue();
    assertThat(AccessLevel.READ_ONLY.satisfiedBy(EnumSet.noneOf(Role.class))).isFalse();
  }
}
