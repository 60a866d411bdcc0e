package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The log writer's map key: equal by its three names, whichever instance carries them. */
class PartitionKeyTest {
  static final UUID T1 = UUID.fromString("00000000-0000-0000-0000-00000000000a");
  static final UUID T2 = UUID.fromString("00000000-0000-0000-0000-00000000000b");

  @Test
  void keysOfTheSameNamesAreEqualAndFindEachOthersEntries() {
    // separate string instances, as two requests parse them
    var a = new PartitionKey(new UUID(0, 10), new String("orders"), new String("p-1"));
    var b = new PartitionKey(T1, "orders", "p-1");
    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    var map = new HashMap<PartitionKey, String>();
    map.put(a, "x");
    assertThat(map.get(b)).isEqualTo("x");
    assertThat(map.remove(b)).isEqualTo("x");
    assertThat(map).isEmpty();
  }

  @Test
  void anyNameThatDiffersMakesAnotherKey() {
    var k = new PartitionKey(T1, "orders", "p-1");
    assertThat(k).isNotEqualTo(new PartitionKey(T2, "orders", "p-1"))
        .isNotEqualTo(new PartitionKey(T1, "orders2", "p-1"))
        .isNotEqualTo(new PartitionKey(T1, "orders", "p-2"))
        // the same characters split differently between queue and partition
        .isNotEqualTo(new PartitionKey(T1, "order", "sp-1"))
        .isNotEqualTo(null)
        .isNotEqualTo("orders");
    // "Aa" and "BB" share a String hash: the names are compared, not only the hash
    var aa = new PartitionKey(T1, "Aa", "Aa");
    var bb = new PartitionKey(T1, "BB", "BB");
    assertThat(aa.hashCode()).isEqualTo(bb.hashCode());
    assertThat(aa).isNotEqualTo(bb).isNotEqualTo(new PartitionKey(T1, "Aa", "BB"))
        .isNotEqualTo(new PartitionKey(T1, "BB", "Aa"));
    assertThat(k.tenant()).isEqualTo(T1);
    assertThat(k.queue()).isEqualTo("orders");
    assertThat(k.partition()).isEqualTo("p-1");
  }
}
