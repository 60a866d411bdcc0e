package io.queenvertx.http.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * The strict UTF-8 check of paths, query parameters and bodies (issue 34), byte by byte: what it refuses is exactly
 * what the JDK's own strict decoder refuses, at every offset of the eight-byte fast path.
 */
class Utf8Test {
  static Buffer bytes(int... b) {
    Buffer out = Buffer.buffer();
    for (int x : b) out.appendByte((byte) x);
    return out;
  }

  static boolean jdkValid(byte[] b) {
    try {
      StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(b));
      return true;
    } catch (java.nio.charset.CharacterCodingException e) {
      return false;
    }
  }

  @Test
  void refusesOverlongSurrogateOutOfRangeStrayAndTruncatedSequences() {
    int[][] bad = {{0xc0, 0xaf}, {0xc1, 0xbf}, {0xe0, 0x80, 0xaf}, {0xf0, 0x80, 0x80, 0xaf}, {0xed, 0xa0, 0x80},
        {0xed, 0xbf, 0xbf}, {0xf4, 0x90, 0x80, 0x80}, {0xf5, 0x80, 0x80, 0x80}, {0xff}, {0x80}, {0xbf},
        {0xe2, 0x82}, {0xf0, 0x9f, 0x98}, {0xc3, 0x41}, {0xe2, 0x28, 0xa1}};
    for (int[] b : bad) {
      for (int pad = 0; pad < 10; pad++) {
        Buffer buf = Buffer.buffer("x".repeat(pad)).appendBuffer(bytes(b)).appendString("yz");
        assertThat(Utf8.invalidAt(buf, false)).as("%s after %d bytes", java.util.Arrays.toString(b), pad)
            .isEqualTo(pad);
        assertThat(jdkValid(buf.getBytes())).isFalse();
      }
    }
  }

  @Test
  void acceptsEveryWellFormedSequenceAtEveryOffset() {
    String text = "a\u00e9\u07ff\u0800\u20ac\ud7ff\ue000\uffff\ud800\udc00\ud83d\ude00\udbff\udfff-end";
    for (int pad = 0; pad < 10; pad++) {
      Buffer buf = Buffer.buffer("x".repeat(pad) + text);
      assertThat(Utf8.invalidAt(buf, true)).as("after %d bytes", pad).isEqualTo(-1);
    }
    assertThat(Utf8.invalidAt(Buffer.buffer(), true)).isEqualTo(-1);
  }

  @Test
  void aNulByteIsRefusedOnlyWhenAsked() {
    for (int at = 0; at < 20; at++) {
      Buffer buf = Buffer.buffer("0123456789abcdefghij");
      buf.setByte(at, (byte) 0);
      assertThat(Utf8.invalidAt(buf, true)).as("NUL at %d", at).isEqualTo(at);
      assertThat(Utf8.invalidAt(buf, false)).isEqualTo(-1);
    }
  }

  @Test
  void agreesWithTheJdkDecoderOnRandomBytes() {
    var random = new java.util.Random(34);
    for (int i = 0; i < 20_000; i++) {
      byte[] b = new byte[random.nextInt(12)];
      for (int k = 0; k < b.length; k++) {
        b[k] = (byte) (random.nextBoolean() ? 0x41 + random.nextInt(26) : 0x80 + random.nextInt(0x80));
      }
      assertThat(Utf8.invalidAt(Buffer.buffer(b), false) < 0).as(java.util.HexFormat.of().formatHex(b))
          .isEqualTo(jdkValid(b));
    }
  }
}
