package io.queenvertx.decoder;

import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DecodeRequest;
import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.codec.DecodedSegment;
import io.queenvertx.codec.EnvelopeCipher;
import io.queenvertx.codec.Frame;
import io.queenvertx.codec.Segment;
import io.queenvertx.codec.SegmentDecodeException;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Segment decoder, deployed as a worker verticle: zstd decode, frame decode and payload decryption happen here, off
 * the event loops. Answers {@link Addresses#DECODE} with {@link DecodedFrames}; a corrupt segment fails the request
 * with code 500 and the text {@code frame decode failed}.
 */
public final class SegmentDecoderVerticle extends VerticleBase {
  public static final int DECODE_FAILED = 500;

  private final Pool pool;
  private final SegmentCache cache;
  private final Optional<EnvelopeCipher> cipher;

  public SegmentDecoderVerticle(Pool pool, SegmentCache cache, Optional<EnvelopeCipher> cipher) {
    this.pool = pool;
    this.cache = cache;
    this.cipher = cipher;
  }

  @Override
  public Future<?> start() {
    return vertx.eventBus().<DecodeRequest>localConsumer(Addresses.DECODE, this::onDecode).completion();
  }

  private void onDecode(Message<DecodeRequest> msg) {
    DecodeRequest req = msg.body();
    DecodedSegment seg = cache.get(req.partitionId(), req.baseOffset());
    if (seg != null) {
      reply(msg, seg, req);
      return;
    }
    if (req.blob() != null) {
      decodeAndReply(msg, req, req.blob());
      return;
    }
    pool.preparedQuery("SELECT base_offset, blob FROM queen.log_segments WHERE partition_id = $1 AND base_offset = $2")
        .execute(Tuple.of(req.partitionId(), req.baseOffset()))
        .onSuccess(rows -> {
          var it = rows.iterator();
          if (!it.hasNext()) {
            msg.reply(DecodedFrames.GONE, LocalCodec.OPTIONS);
            return;
          }
          Row r = it.next();
          Buffer blob = r.getBuffer("blob");
          decodeAndReply(msg, req, blob.getBytes());
        })
        .onFailure(e -> msg.fail(500, "segment fetch failed: " + e.getMessage()));
  }

  private void decodeAndReply(Message<DecodeRequest> msg, DecodeRequest req, byte[] blob) {
    DecodedSegment seg;
    try {
      seg = Segment.decode(blob);
      cache.countDecode();
    } catch (SegmentDecodeException e) {
      msg.fail(DECODE_FAILED, "frame decode failed");
      return;
    }
    cache.put(req.partitionId(), req.baseOffset(), seg);
    reply(msg, seg, req);
  }

  private void reply(Message<DecodeRequest> msg, DecodedSegment seg, DecodeRequest req) {
    int from = Math.max(0, req.from());
    int count = req.count() < 0 ? seg.frameCount() - from : Math.min(req.count(), seg.frameCount() - from);
    if (count <= 0) {
      msg.reply(new DecodedFrames(true, List.of(), List.of(), List.of()), LocalCodec.OPTIONS);
      return;
    }
    try {
      List<Frame> frames = seg.frames(from, count);
      List<byte[]> payloads = new ArrayList<>(frames.size());
      List<Boolean> decrypted = new ArrayList<>(frames.size());
      for (Frame f : frames) {
        byte[] p = f.payload();
        if (cipher.isPresent() && p.length > 0 && p[0] == '{') {
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
      msg.reply(new DecodedFrames(true, frames, payloads, decrypted), LocalCodec.OPTIONS);
    } catch (SegmentDecodeException e) {
      msg.fail(DECODE_FAILED, "frame decode failed");
    }
  }
}
