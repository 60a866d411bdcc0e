package io.queenvertx.engine;

import static io.queenvertx.testing.Wire.item;
import static io.queenvertx.testing.Wire.push;
import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import io.queenvertx.testing.TestNode.Reply;
import io.queenvertx.testing.Wire;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A push carries at most {@code QUEEN_MAX_PUSH_ITEMS} items (issue 34 item 12: one push of 1,000,000 items took 40 s
 * and 1.39 GB). One more is a 413 naming {@code items} and the limit, and nothing of the push is stored: the client
 * is told to split it, never left with a partial write.
 */
class PushLimitsIT {
  static final int MAX = 50;

  @NodeFixture(env = {"QUEEN_MAX_PUSH_ITEMS=" + MAX})
  static TestNode node;

  static JsonObject[] items(String q, int n) {
    List<JsonObject> items = new ArrayList<>();
    for (int i = 0; i < n; i++) items.add(item(q, null, new JsonObject().put("n", i), "t-" + i));
    return items.toArray(JsonObject[]::new);
  }

  @Test
  void aPushOfTheMaximumIsStored() {
    String q = Wire.queue("push-max");
    Reply r = push(node, items(q, MAX));
    assertThat(r.status()).as(r.body()).isEqualTo(201);
    assertThat(r.array()).hasSize(MAX);
    assertThat(Wire.messages(Wire.popSome(node, q, "batch=1000"))).hasSize(MAX);
  }

  @Test
  void oneItemMoreIsA413NamingItemsAndNothingIsStored() {
    String q = Wire.queue("push-over");
    Reply r = push(node, items(q, MAX + 1));
    assertThat(r.status()).as(r.body()).isEqualTo(413);
    assertThat(r.json().getString("error")).contains("`items`").contains(String.valueOf(MAX))
        .contains("QUEEN_MAX_PUSH_ITEMS");
    assertThat(Wire.pop(node, q, "batch=1000").status()).as("nothing of the refused push was stored").isEqualTo(204);
  }
}
