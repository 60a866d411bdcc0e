package io.queenvertx.decoder;

import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.codec.DecodedSegment;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.queenvertx.codec.SegmentDecodeException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * Turns a stored segment into the frames a caller asked for: the node's {@link SegmentCache} first, else zstd and
 * frame decode (then cached), then payload decryption where a key is configured and the frame is flagged encrypted.
 * Thread-safe; used by the decoder verticle, and by the consumer for pops: on its event loop for pops whose blobs
 * are small enough that the decode costs less than the hop to a worker thread ({@link #INLINE_MAX_BYTES}), else on
 * the worker pool.
 */
public final class FrameDecoder {
  /** A pop whose slices carry at most this many blob bytes in total is decoded where it is rendered. */
  public static final int INLINE_MAX_BYTES = 64 * 1024;

  private final SegmentCache cache;
  private final Optional<EnvelopeCipher> cipher;

  public FrameDecoder(SegmentCache cache, Optional<EnvelopeCipher> cipher) {
    this.cache = cache;
    this.cipher = cipher;
  }

  /** The cached segment at (pid, base), or null. */
  DecodedSegment cached(UUID pid, long base) {
    return cache.get(pid, base);
  }

  /** Decodes {@code blob}, the segment at (pid, base), and caches it. */
  DecodedSegment decode(UUID pid, long base, byte[] blob) throws SegmentDecodeException {
    DecodedSegment seg = Segment.decode(blob);
    cache.countDecode();
    cache.put(pid, base, seg);
    return seg;
  }

  /** Frames {@code [from, from+count)} of the segment at (pid, base), whose stored blob is {@code blob}. */
  public DecodedFrames frames(UUID pid, long base, byte[] blob, int from, int count) throws SegmentDecodeException {
    DecodedSegment seg = cached(pid, base);
    if (seg == null) seg = decode(pid, base, blob);
    return frames(seg, from, count);
  }

  DecodedFrames frames(DecodedSegment seg, int from, int count) throws SegmentDecodeException {
    from = Math.max(0, from);
    count = count < 0 ? seg.frameCount() - from : Math.min(count, seg.frameCount() - from);
    if (count <= 0) return new DecodedFrames(true, List.of(), List.of(), List.of());
    List<Frame> frames = seg.frames(from, count);
    List<byte[]> payloads = new ArrayList<>(frames.size());
    List<Boolean> decrypted = new ArrayList<>(frames.size());
    for (Frame f : frames) {
      byte[] p = f.payload();
      // the frame says whether its payload is an envelope; a plaintext payload is never put through the cipher
      if (f.encrypted() && cipher.isPresent()) {
        Optional<byte[]> plain = cipher.get().tryDecrypt(p);
        if (plain.isPresent()) {
          payloads.add(plain.get());
          decrypted.add(true);
          continue;
        }
      }
      payloads.add(p);
      decrypted.add(false);
    }
    return new DecodedFrames(true, frames, payloads, decrypted);
  }
}
