package io.queenvertx.kernel;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ProcedureResultTest {
  @Test
  void anErrorContainingNotFoundInAnyCaseIs404() {
    assertThat(ProcedureResult.statusOf("{\"error\":\"Queue not found\"}")).isEqualTo(404);
    assertThat(ProcedureResult.statusOf("{\"error\":\"queue NOT FOUND here\"}")).isEqualTo(404);
  }

  @Test
  void anyOtherErrorIs500() {
    assertThat(ProcedureResult.statusOf("{\"error\":\"deadlock detected\"}")).isEqualTo(500);
    assertThat(ProcedureResult.statusOf("{\"error\":{\"nested\":true}}")).isEqualTo(500);
  }

  @Test
  void noErrorKeyOrANullErrorIs200() {
    assertThat(ProcedureResult.statusOf("{\"queues\":[]}")).isEqualTo(200);
    assertThat(ProcedureResult.statusOf("{\"error\":null,\"ok\":true}")).isEqualTo(200);
  }

  @Test
  void aBodyThatIsNotJsonIs200Unchanged() {
    assertThat(ProcedureResult.statusOf("not json {")).isEqualTo(200);
    assertThat(ProcedureResult.statusOf("{broken")).isEqualTo(200);
    assertThat(ProcedureResult.statusOf("[{\"error\":\"not found\"}]")).isEqualTo(200);
    assertThat(ProcedureResult.statusOf("")).isEqualTo(200);
  }
}
