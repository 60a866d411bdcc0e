package io.queenvertx.decoder;

import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DecodeRequest;
import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.codec.DecodedSegment;
import io.queenvertx.codec.SegmentDecodeException;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.Message;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;

/**
 * Segment decoder, deployed as a worker verticle: zstd decode, frame decode and payload decryption happen here, off
 * the event loops, for dead-letter hand-offs and inspection payloads (pops are decoded by the consumer with the same
 * {@link FrameDecoder}: on its event loop when small, else on the worker pool). Answers {@link Addresses#DECODE}
 * with {@link DecodedFrames}; a corrupt segment fails the
 * request with code 500 and the text {@code frame decode failed}.
 */
public final class SegmentDecoderVerticle extends VerticleBase {
  public static final int DECODE_FAILED = 500;

  private final Pool pool;
  private final FrameDecoder decoder;

  public SegmentDecoderVerticle(Pool pool, FrameDecoder decoder) {
    this.pool = pool;
    this.decoder = decoder;
  }

  @Override
  public Future<?> start() {
    return vertx.eventBus().<DecodeRequest>localConsumer(Addresses.DECODE, this::onDecode).completion();
  }

  private void onDecode(Message<DecodeRequest> msg) {
    DecodeRequest req = msg.body();
    DecodedSegment seg = decoder.cached(req.partitionId(), req.baseOffset());
    if (seg != null) {
      reply(msg, seg, req);
      return;
    }
    if (req.blob() != null) {
      decodeAndReply(msg, req, req.blob());
      return;
    }
    pool.preparedQuery("SELECT base_offset, blob FROM queen.log_segment_at($1, $2) WHERE base_offset = $2")
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
      seg = decoder.decode(req.partitionId(), req.baseOffset(), blob);
    } catch (SegmentDecodeException e) {
      msg.fail(DECODE_FAILED, "frame decode failed");
      return;
    }
    reply(msg, seg, req);
  }

  private void reply(Message<DecodeRequest> msg, DecodedSegment seg, DecodeRequest req) {
    try {
      msg.reply(decoder.frames(seg, req.from(), req.count()), LocalCodec.OPTIONS);
    } catch (SegmentDecodeException e) {
      msg.fail(DECODE_FAILED, "frame decode failed");
    }
  }
}
