package io.queenvertx.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.queenvertx.bus.PushCommand;
import io.queenvertx.bus.PushItem;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.TxnHash;
import io.queenvertx.codec.UuidV7;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The push path's encryption decisions with a real cipher. The flag cache is given no pool: any lookup these cases
 * must not make would fail the test.
 */
class PushEncryptionTest {
  static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-00000000000a");
  static final EnvelopeCipher CIPHER = EnvelopeCipher.fromHex("00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
  static final byte[] JSON = "{\"n\":1}".getBytes(StandardCharsets.UTF_8);

  static PushEncryption withKey() {
    return new PushEncryption(Optional.of(CIPHER), new QueueSettings(null));
  }

  static PushEncryption withoutKey() {
    return new PushEncryption(Optional.empty(), new QueueSettings(null));
  }

  @Test
  void aQueueIsEncryptedByItsFlagAndAnUnreadFlagMeansEncryptedWhenThereIsAKey() {
    Map<String, Boolean> flags = Map.of("secret", true, "plain", false);
    assertThat(withKey().encrypts("secret", flags)).isTrue();
    assertThat(withKey().encrypts("plain", flags)).isFalse();
    assertThat(withKey().encrypts("unread", flags)).isTrue();
    assertThat(withoutKey().encrypts("unread", flags)).isFalse();
    assertThat(withoutKey().encrypts("secret", flags)).isTrue();
  }

  @Test
  void storedPayloadIsTheCiphersEnvelopeForAnEncryptedQueueAndUntouchedOtherwise() {
    Map<String, Boolean> flags = Map.of("secret", true, "plain", false);
    byte[] stored = withKey().storedPayload("secret", flags, JSON);
    assertThat(stored).isNotEqualTo(JSON);
    assertThat(EnvelopeCipher.looksLikeEnvelope(stored)).isTrue();
    assertThat(CIPHER.tryDecrypt(stored)).hasValueSatisfying(p -> assertThat(p).isEqualTo(JSON));
    assertThat(withKey().storedPayload("plain", flags, JSON)).isSameAs(JSON);
    // Never plaintext for an encrypted queue: without a key the item is refused (null).
    assertThat(withoutKey().storedPayload("secret", flags, JSON)).isNull();
  }

  @Test
  void withoutAKeyNoFlagIsLookedUpAndEveryQueueReadsAsPlain() {
    var items = List.of(new PushItem("a", "p", null, JSON), new PushItem("b", "p", null, JSON),
        new PushItem("a", "q", null, JSON));
    var flags = withoutKey().flagsFor(TENANT, items);
    assertThat(flags.succeeded()).isTrue();
    assertThat(flags.result()).isEqualTo(Map.of("a", false, "b", false));
  }

  @Test
  void withoutAKeyARequestNamingOneQueueMapsThatQueueToPlain() {
    var items = List.of(new PushItem("a", "p", null, JSON), new PushItem("a", "q", null, JSON));
    var flags = withoutKey().flagsFor(TENANT, items);
    assertThat(flags.succeeded()).isTrue();
    assertThat(flags.result()).isEqualTo(Map.of("a", false));
    assertThat(withoutKey().flagsFor(TENANT, List.of(new PushItem("b", "p", null, JSON))).result())
        .isEqualTo(Map.of("b", false));
  }

  @Test
  void aQcryptRetryOfAnAllEncryptedBundleLooksNothingUpAndRequeuesItsSlotsAsTheyWere() {
    var req = new Request(new PushCommand(TENANT, null, List.of(new PushItem("secret", "p", "t", JSON))), o -> { },
        false);
    byte[] sealed = CIPHER.encryptToBytes(JSON);
    var frame = new Frame(UuidV7.next(), "t", null, null, sealed, true);
    var slot = new Slot(frame, TxnHash.of("t"), req, 0);
    var key = new PartitionKey(TENANT, "secret", "p");
    var seg = new PackedSegment(key, List.of(slot), new byte[0], null, null);
    List<List<Slot>> requeued = new ArrayList<>();
    var done = withKey().prepareRetry(null, List.of(seg), (k, slots) -> {
      assertThat(k).isEqualTo(key);
      requeued.add(slots);
    });
    assertThat(done.succeeded()).isTrue();
    assertThat(requeued).hasSize(1);
    assertThat(requeued.get(0)).containsExactly(slot);
    assertThat(slot.frame).isSameAs(frame);
    assertThat(PushEncryption.allEncrypted(List.of(slot))).isTrue();
  }

  @Test
  void onlyAQcryptRefusalIsACryptRetry() {
    assertThat(PushEncryption.isCrypt(new io.vertx.pgclient.PgException(
        "QCRYPT plaintext frames for encrypted queue(s): q", "ERROR", "QV103", null))).isTrue();
    assertThat(PushEncryption.isCrypt(new io.vertx.pgclient.PgException(
        "QSTALE 1 of 1 partitions of this bundle no longer exist", "ERROR", "QV107", null))).isFalse();
    // the text alone decides nothing
    assertThat(PushEncryption.isCrypt(new RuntimeException("ERROR: QCRYPT plaintext frames for encrypted queue(s): q")))
        .isFalse();
    assertThat(PushEncryption.isCrypt(new RuntimeException((String) null))).isFalse();
  }
}
