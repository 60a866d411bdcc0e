package io.queenvertx.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.queenvertx.codec.SegmentDecodeException.Reason;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class FrameTest {

  private static final UUID MSG = UUID.fromString("0190a6b2-3c4d-7000-8000-000000000001");
  private static final UUID TRACE = UUID.fromString("0190a6b2-3c4d-7000-8000-0000000000ff");

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Reason decodeFailure(byte[] bytes) {
    return catchThrowableOfType(SegmentDecodeException.class, () -> Frame.decode(bytes, 0, bytes.length)).reason();
  }

  /** Builds frame bytes field by field, independently of Frame.encode. */
  private static byte[] wire(int flags, UUID trace, byte[] txn, byte[] psub, byte[] payload) {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.write(flags);
    body.writeBytes(UuidV7.toBytes(MSG));
    if (trace != null) {
      body.writeBytes(UuidV7.toBytes(trace));
    }
    body.write(txn.length & 0xFF);
    body.write(txn.length >>> 8);
    body.writeBytes(txn);
    if (psub != null) {
      body.write(psub.length & 0xFF);
      body.write(psub.length >>> 8);
      body.writeBytes(psub);
    }
    body.writeBytes(payload);
    byte[] b = body.toByteArray();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(b.length & 0xFF);
    out.write(b.length >>> 8 & 0xFF);
    out.write(b.length >>> 16 & 0xFF);
    out.write(b.length >>> 24 & 0xFF);
    out.writeBytes(b);
    return out.toByteArray();
  }

  @Test
  void fullFrameIsLaidOutAsTheEngineTableSays() {
    Frame f = new Frame(MSG, "order-1", TRACE, "alice", utf8("{\"a\":1}"), true);
    byte[] expected = wire(7, TRACE, utf8("order-1"), utf8("alice"), utf8("{\"a\":1}"));
    assertThat(f.encode()).isEqualTo(expected);
    // body_len 56 = 1 + 16 + 16 + (2 + 7) + (2 + 5) + 7, little-endian, then flags 7
    assertThat(TxnHash.hex(Arrays.copyOf(expected, 5))).isEqualTo("3800000007");
  }

  @Test
  void minimalFrameIsTwentyThreeBytesWithABodyOfNineteen() {
    byte[] bytes = Frame.of(MSG, "", new byte[0]).encode();
    assertThat(bytes).hasSize(Frame.MIN_FRAME_BYTES).hasSize(23);
    assertThat(bytes[0]).isEqualTo((byte) 19);
    assertThat(bytes[4]).isZero(); // no flags
  }

  @Test
  void flagsFollowOptionalFields() {
    assertThat(Frame.of(MSG, "t", new byte[0]).flags()).isZero();
    assertThat(new Frame(MSG, "t", TRACE, null, new byte[0], false).flags()).isEqualTo(Frame.FLAG_TRACE);
    assertThat(new Frame(MSG, "t", null, "", new byte[0], false).flags()).isEqualTo(Frame.FLAG_PRODUCER_SUB);
    assertThat(new Frame(MSG, "t", null, null, new byte[0], true).flags()).isEqualTo(Frame.FLAG_ENCRYPTED);
  }

  @Test
  void everyCombinationOfOptionalFieldsRoundTrips() throws Exception {
    for (int flags = 0; flags < 8; flags++) {
      Frame f = new Frame(MSG, "txn-" + flags, (flags & 1) != 0 ? TRACE : null, (flags & 2) != 0 ? "sub" : null,
          flags % 3 == 0 ? new byte[0] : utf8("[" + flags + "]"), (flags & 4) != 0);
      byte[] bytes = f.encode();
      assertThat(Frame.decode(bytes, 0, bytes.length)).isEqualTo(f);
      assertThat(bytes[4]).isEqualTo((byte) flags);
    }
  }

  @Test
  void emptyProducerSubIsKeptDistinctFromAbsent() throws Exception {
    byte[] withEmpty = new Frame(MSG, "t", null, "", new byte[0], false).encode();
    assertThat(Frame.decode(withEmpty, 0, withEmpty.length).producerSub()).isEmpty();
    byte[] absent = Frame.of(MSG, "t", new byte[0]).encode();
    assertThat(Frame.decode(absent, 0, absent.length).producerSub()).isNull();
  }

  @Test
  void decodeReadsAFrameInsideALargerBuffer() throws Exception {
    Frame f = new Frame(MSG, "zamówienie-🚀", TRACE, "sub-é", utf8("\"x\""), false);
    byte[] bytes = f.encode();
    byte[] buf = new byte[bytes.length + 10];
    Arrays.fill(buf, (byte) 0x5A);
    System.arraycopy(bytes, 0, buf, 7, bytes.length);
    assertThat(Frame.decode(buf, 7, bytes.length)).isEqualTo(f);
  }

  @Test
  void textFieldsUpTo65535Utf8BytesAreAccepted() throws Exception {
    String txn = "x".repeat(65_535);
    String psub = "é".repeat(32_767) + "x"; // 65 535 bytes
    Frame f = new Frame(MSG, txn, null, psub, new byte[0], false);
    byte[] bytes = f.encode();
    assertThat(Frame.decode(bytes, 0, bytes.length)).isEqualTo(f);
  }

  @Test
  void textFieldsOver65535Utf8BytesAreRejectedOnEncode() {
    assertThatThrownBy(() -> Frame.of(MSG, "x".repeat(65_536), new byte[0]).encode())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("transactionId")
        .hasMessageContaining("65536");
    // 21 846 chars but 65 538 bytes: the limit counts bytes, not chars
    assertThatThrownBy(() -> Frame.of(MSG, "€".repeat(21_846), new byte[0]).encode())
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Frame(MSG, "t", null, "€".repeat(21_846), new byte[0], false).encode())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("producerSub");
  }

  @Test
  void requiredFieldsMustNotBeNull() {
    assertThatThrownBy(() -> Frame.of(null, "t", new byte[0])).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> Frame.of(MSG, null, new byte[0])).isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> Frame.of(MSG, "t", null)).isInstanceOf(NullPointerException.class);
  }

  @Test
  void emptyPayloadRendersAsNull() {
    assertThat(Frame.of(MSG, "t", new byte[0]).payloadOrNull()).isNull();
    assertThat(Frame.of(MSG, "t", utf8("1")).payloadOrNull()).containsExactly('1');
  }

  @Test
  void equalityComparesPayloadContentAndToStringHidesIt() {
    Frame a = Frame.of(MSG, "t", utf8("{\"secret\":1}"));
    Frame b = Frame.of(MSG, "t", utf8("{\"secret\":1}"));
    assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    assertThat(a).isNotEqualTo(Frame.of(MSG, "t", utf8("{\"secret\":2}")));
    assertThat(a.toString()).doesNotContain("secret").contains("12 bytes");
  }

  @Test
  void unpairedSurrogateIsStoredAsQuestionMarkLikeItsHash() throws Exception {
    byte[] bytes = Frame.of(MSG, "a\uD800b", new byte[0]).encode();
    assertThat(Frame.decode(bytes, 0, bytes.length).transactionId()).isEqualTo("a?b");
  }

  @Test
  void bodyLenMustMatchTheRegion() {
    byte[] bytes = Frame.of(MSG, "t", utf8("1")).encode();
    bytes[0]++;
    assertThat(decodeFailure(bytes)).isEqualTo(Reason.FRAME_MALFORMED);
    bytes[0] -= 2;
    assertThat(decodeFailure(bytes)).isEqualTo(Reason.FRAME_MALFORMED);
  }

  @Test
  void regionsShorterThanAMinimalFrameOrOutsideTheBufferAreMalformed() {
    assertThat(decodeFailure(new byte[22])).isEqualTo(Reason.FRAME_MALFORMED);
    assertThat(decodeFailure(new byte[0])).isEqualTo(Reason.FRAME_MALFORMED);
    byte[] bytes = Frame.of(MSG, "t", new byte[0]).encode();
    assertThatThrownBy(() -> Frame.decode(bytes, 1, bytes.length)).isInstanceOf(SegmentDecodeException.class);
    assertThatThrownBy(() -> Frame.decode(bytes, -1, 3)).isInstanceOf(SegmentDecodeException.class);
    assertThatThrownBy(() -> Frame.decode(bytes, 0, -1)).isInstanceOf(SegmentDecodeException.class);
  }

  @Test
  void unknownFlagBitsAreMalformed() {
    for (int bit = 3; bit < 8; bit++) {
      byte[] bytes = wire(1 << bit, null, utf8("t"), null, new byte[0]);
      assertThat(decodeFailure(bytes)).as("flag bit %d", bit).isEqualTo(Reason.FRAME_MALFORMED);
    }
  }

  @Test
  void fieldLengthsRunningPastTheBodyAreMalformed() {
    // trace flag set but the body ends right after txn_len
    byte[] noRoomForTrace = wire(Frame.FLAG_TRACE, null, new byte[0], null, new byte[0]);
    assertThat(decodeFailure(noRoomForTrace)).isEqualTo(Reason.FRAME_MALFORMED);
    // txn_len claims more than remains
    byte[] longTxn = wire(0, null, utf8("abc"), null, new byte[0]);
    longTxn[4 + 1 + 16] = 4;
    assertThat(decodeFailure(longTxn)).isEqualTo(Reason.FRAME_MALFORMED);
    // psub flag set but no psub_len
    byte[] noPsubLen = wire(Frame.FLAG_PRODUCER_SUB, null, utf8("abc"), null, new byte[0]);
    assertThat(decodeFailure(noPsubLen)).isEqualTo(Reason.FRAME_MALFORMED);
    // psub_len claims more than remains
    byte[] longPsub = wire(Frame.FLAG_PRODUCER_SUB, null, utf8("abc"), utf8("xy"), new byte[0]);
    longPsub[4 + 1 + 16 + 2 + 3] = 3;
    assertThat(decodeFailure(longPsub)).isEqualTo(Reason.FRAME_MALFORMED);
  }

  @Test
  void invalidUtf8InTextFieldsIsMalformed() {
    byte[][] bad = {
        {(byte) 0xC0, (byte) 0x80},             // overlong NUL
        {(byte) 0x80},                          // lone continuation
        {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, // UTF-8-encoded surrogate
        {(byte) 0xE2, (byte) 0x82},             // truncated sequence
        {(byte) 0xF5, (byte) 0x80, (byte) 0x80, (byte) 0x80}};
    for (byte[] b : bad) {
      assertThat(decodeFailure(wire(0, null, b, null, new byte[0]))).isEqualTo(Reason.FRAME_MALFORMED);
      assertThat(decodeFailure(wire(Frame.FLAG_PRODUCER_SUB, null, utf8("t"), b, new byte[0])))
          .isEqualTo(Reason.FRAME_MALFORMED);
    }
  }

  @Test
  void payloadIsNotValidatedAsTextOrJson() throws Exception {
    byte[] payload = {(byte) 0xFF, 0, (byte) 0xC0};
    byte[] bytes = Frame.of(MSG, "t", payload).encode();
    assertThat(Frame.decode(bytes, 0, bytes.length).payload()).isEqualTo(payload);
  }

  @Property
  void anyFrameRoundTrips(@ForAll("frames") Frame f) throws Exception {
    byte[] bytes = f.encode();
    assertThat(Frame.decode(bytes, 0, bytes.length)).isEqualTo(f);
  }

  @Property
  void anyFrameThatDecodesReEncodesToTheSameBytes(@ForAll("mutatedFrames") byte[] bytes) {
    Frame f;
    try {
      f = Frame.decode(bytes, 0, bytes.length);
    } catch (SegmentDecodeException e) {
      assertThat(e.reason()).isEqualTo(Reason.FRAME_MALFORMED);
      return;
    }
    assertThat(f.encode()).isEqualTo(bytes);
  }

  @Provide
  Arbitrary<Frame> frames() {
    return SampleFrames.frames();
  }

  /** Valid frames with one byte overwritten: mostly still well-delimited, so the inner checks get exercised. */
  @Provide
  Arbitrary<byte[]> mutatedFrames() {
    return net.jqwik.api.Combinators.combine(SampleFrames.frames(), Arbitraries.integers().greaterOrEqual(0),
            Arbitraries.bytes())
        .as((frame, at, value) -> {
          byte[] b = frame.encode();
          int i = 4 + at % (b.length - 4); // keep body_len so the region stays one frame
          b[i] = value;
          return b;
        });
  }
}
