package io.queenvertx.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hashing;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TxnHashTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(emptyValue = "", value = {
      "'', 99aa06d3014798d86001c324468d497f",
      "order-4471, f3f8e265ab4439b2c119e5212886e4bf",
      "txn-0001, e6db1a376171f085299a000943065f9c"})
  void hashMatchesXxhsumPinnedVectors(String txn, String expectedHex) {
    assertThat(TxnHash.hex(TxnHash.of(txn))).isEqualTo(expectedHex);
  }

  @Test
  void hashIsSixteenBytesMostSignificantLongFirst() {
    HashValue128 h = Hashing.xxh3_128().hashBytesTo128Bits("order-4471".getBytes(StandardCharsets.UTF_8));
    ByteBuffer bb = ByteBuffer.wrap(TxnHash.of("order-4471"));
    assertThat(bb.capacity()).isEqualTo(TxnHash.BYTES);
    assertThat(bb.getLong()).isEqualTo(h.getMostSignificantBits());
    assertThat(bb.getLong()).isEqualTo(h.getLeastSignificantBits());
    // and therefore not hash4j's little-endian rendering
    assertThat(TxnHash.of("order-4471")).isNotEqualTo(h.toByteArray());
  }

  @Test
  void nonAsciiIdsHashTheirUtf8BytesNotUtf16() {
    String id = "zamówienie-🚀-注文";
    HashValue128 utf8 = Hashing.xxh3_128().hashBytesTo128Bits(id.getBytes(StandardCharsets.UTF_8));
    HashValue128 utf16 = Hashing.xxh3_128().hashCharsTo128Bits(id);
    ByteBuffer bb = ByteBuffer.wrap(TxnHash.of(id));
    assertThat(bb.getLong()).isEqualTo(utf8.getMostSignificantBits());
    assertThat(bb.getLong()).isEqualTo(utf8.getLeastSignificantBits());
    assertThat(utf16).isNotEqualTo(utf8);
  }

  @Test
  void unpairedSurrogateHashesAsJavasUtf8ReplacementLikeTheFrameStoresIt() {
    assertThat(TxnHash.of("a\uD800b")).isEqualTo(TxnHash.of("a?b"));
  }

  @Test
  void hexIsLowercaseTwoDigitsPerByte() {
    assertThat(TxnHash.hex(new byte[] {0, 1, (byte) 0xAB, (byte) 0xFF, 0x7F})).isEqualTo("0001abff7f");
    assertThat(TxnHash.hex(new byte[0])).isEmpty();
  }

  @Test
  void concatLaysHashesEndToEndInListOrder() {
    byte[] a = TxnHash.of("a");
    byte[] b = TxnHash.of("b");
    byte[] blob = TxnHash.concat(List.of(a, b, a));
    assertThat(blob).hasSize(48);
    assertThat(Arrays.copyOfRange(blob, 0, 16)).isEqualTo(a);
    assertThat(Arrays.copyOfRange(blob, 16, 32)).isEqualTo(b);
    assertThat(Arrays.copyOfRange(blob, 32, 48)).isEqualTo(a);
    assertThat(TxnHash.concat(List.of())).isEmpty();
  }

  @Test
  void concatRejectsAnElementThatIsNotSixteenBytes() {
    List<byte[]> hashes = new ArrayList<>(List.of(TxnHash.of("a"), new byte[15]));
    assertThatThrownBy(() -> TxnHash.concat(hashes))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("hash #1");
    hashes.set(1, null);
    assertThatThrownBy(() -> TxnHash.concat(hashes)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void concurrentHashingAgreesWithSequential() throws Exception {
    List<String> ids = IntStream.range(0, 20_000).mapToObj(i -> "txn-" + i).toList();
    List<String> expected = ids.stream().map(id -> TxnHash.hex(TxnHash.of(id))).toList();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<List<String>>> runs = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        runs.add(pool.submit(() -> ids.stream().map(id -> TxnHash.hex(TxnHash.of(id))).toList()));
      }
      for (Future<List<String>> run : runs) {
        assertThat(run.get()).isEqualTo(expected);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Property(tries = 300)
  void hashIsAFunctionOfTheUtf8BytesOnly(@ForAll String id) {
    byte[] utf8 = id.getBytes(StandardCharsets.UTF_8);
    assertThat(TxnHash.of(id))
        .hasSize(16)
        .isEqualTo(TxnHash.of(new String(utf8, StandardCharsets.UTF_8)));
  }
}
