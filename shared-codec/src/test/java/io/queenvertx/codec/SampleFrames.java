package io.queenvertx.codec;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/** Frame generators shared by the codec tests. */
final class SampleFrames {

  private SampleFrames() {}

  static Frame numbered(int i) {
    UUID trace = i % 3 == 0 ? new UUID(0x7000L + i, 0x8000_0000_0000_0000L | i) : null;
    String psub = i % 5 == 0 ? "user-" + i : null;
    byte[] payload = i % 7 == 0 ? new byte[0] : ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8);
    return new Frame(UuidV7.next(), "txn-" + i, trace, psub, payload, i % 2 == 0);
  }

  static List<Frame> numbered(int from, int count) {
    return java.util.stream.IntStream.range(from, from + count).mapToObj(SampleFrames::numbered).toList();
  }

  /** Any valid Unicode text (no unpaired surrogates), weighted towards ASCII ids. */
  static Arbitrary<String> text(int maxCodePoints) {
    Arbitrary<Integer> codePoint = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(6, Arbitraries.integers().between(0x20, 0x7E)),
        net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0, 0x1F)),
        net.jqwik.api.Tuple.of(2, Arbitraries.integers().between(0x80, 0xFFFF)
            .filter(cp -> cp < Character.MIN_SURROGATE || cp > Character.MAX_SURROGATE)),
        net.jqwik.api.Tuple.of(1, Arbitraries.integers().between(0x10000, Character.MAX_CODE_POINT)));
    return codePoint.list().ofMaxSize(maxCodePoints).map(cps -> {
      StringBuilder sb = new StringBuilder();
      cps.forEach(sb::appendCodePoint);
      return sb.toString();
    });
  }

  static Arbitrary<UUID> uuids() {
    return Arbitraries.longs().tuple2().map(t -> new UUID(t.get1(), t.get2()));
  }

  static Arbitrary<Frame> frames() {
    Arbitrary<byte[]> payload = Arbitraries.oneOf(
        Arbitraries.just(new byte[0]),
        Arbitraries.bytes().array(byte[].class).ofMaxSize(300),
        text(60).map(s -> ("{\"v\":\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}")
            .getBytes(StandardCharsets.UTF_8)));
    return Combinators.combine(
            uuids(),
            text(40),
            uuids().injectNull(0.4),
            text(20).injectNull(0.4),
            payload,
            Arbitraries.of(true, false))
        .as(Frame::new);
  }

  static Arbitrary<List<Frame>> frameLists() {
    return frames().list().ofMinSize(1).ofMaxSize(25);
  }
}
