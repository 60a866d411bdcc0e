package io.queenvertx.clients;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.queenvertx.openapi.client.ApiClient;
import io.queenvertx.openapi.client.ApiException;
import io.queenvertx.openapi.client.api.HealthApi;
import io.queenvertx.openapi.client.api.MessagesApi;
import io.queenvertx.openapi.client.model.AckRequest;
import io.queenvertx.openapi.client.model.AckResult;
import io.queenvertx.openapi.client.model.PopResponse;
import io.queenvertx.openapi.client.model.PoppedMessage;
import io.queenvertx.openapi.client.model.PushItem;
import io.queenvertx.openapi.client.model.PushRequest;
import io.queenvertx.openapi.client.model.PushResult;
import io.queenvertx.testing.NodeFixture;
import io.queenvertx.testing.TestNode;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Java client that openapi-generator writes from {@code openapi.json} at build time (library {@code native},
 * {@code target/generated-test-sources/openapi}; {@code -Dopenapi.client.skip=true} skips it) compiles and pushes,
 * pops and acks against a real node: the document's request and response schemas are the ones the broker speaks.
 */
class GeneratedClientIT {
  @NodeFixture
  static TestNode node;
  ApiClient client;
  MessagesApi messages;
  String queue;

  @BeforeEach
  void client() {
    client = new ApiClient();
    client.updateBaseUri(node.baseUrl());
    messages = new MessagesApi(client);
    queue = "openapi-client-" + UUID.randomUUID();
  }

  @Test
  void pushPopAndAckThroughTheGeneratedClient() throws Exception {
    List<PushResult> pushed = messages.pushMessages(new PushRequest().items(List.of(
        new PushItem().queue(queue).payload(Map.of("n", 1)).transactionId("t-1"),
        new PushItem().queue(queue).payload(Map.of("n", 2)).transactionId("t-2"))));
    assertThat(pushed).extracting(PushResult::getStatus)
        .containsExactly(PushResult.StatusEnum.QUEUED, PushResult.StatusEnum.QUEUED);
    assertThat(pushed).extracting(PushResult::getTransactionId).containsExactly("t-1", "t-2");

    PopResponse popped = pop();
    assertThat(popped.getMessages()).extracting(PoppedMessage::getTransactionId).containsExactly("t-1", "t-2");
    PoppedMessage second = popped.getMessages().get(1);
    assertThat(second.getData()).isEqualTo(Map.of("n", 2));
    assertThat(second.getLeaseId()).isEqualTo(popped.getLeaseId()).isNotEmpty();

    // acking the second commits the cursor past both (API.md §5.5)
    List<AckResult> acked = messages.ackMessage(new AckRequest().transactionId(second.getTransactionId())
        .partitionId(second.getPartitionId().toString()).leaseId(second.getLeaseId()).status("completed"));
    assertThat(acked).singleElement().satisfies(a -> {
      assertThat(a.getSuccess()).isTrue();
      assertThat(a.getError()).isNull();
    });
    // nothing left: the 204 with no body is a null result
    assertThat(pop()).isNull();
  }

  @Test
  void aBadRequestIsAnApiExceptionWithQueensErrorBody() throws Exception {
    ApiException e = catchThrowableOfType(ApiException.class,
        () -> messages.pushMessages(new PushRequest().items(List.of(new PushItem().queue("bad\u0001queue").payload(1)))));
    assertThat(e.getCode()).isEqualTo(400);
    assertThat(e.getResponseBody()).contains("\"error\"").contains("control characters");
    assertThat(new HealthApi(client).getLiveness().getStatus().getValue()).isEqualTo("alive");
  }

  private PopResponse pop() throws ApiException {
    return messages.popQueue(queue, 10, null, null, null, false, null, null, null, null, null, null, null);
  }
}
