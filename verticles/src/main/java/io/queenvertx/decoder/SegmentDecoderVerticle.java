package io.queenvertx.decoder;

import io.queenvertx.bus.Addresses;
import io.queenvertx.bus.DecodeRequest;
import io.queenvertx.bus.DecodedFrames;
import io.queenvertx.bus.LocalCodec;
import io.queenvertx.codec.DecodedSegment;
import io.queenvertx.codec.SegmentDecodeException;
import io.queenvertx.db.SegmentProcedures;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.Message;

/**
 * Segment decoder, deployed as a worker verticle: zstd decode, frame decode and payload decryption happen here, off
 * the event loops, for dead-letter hand-offs and inspection payloads (pops are decoded by the consumer with the same
 * {@link FrameDecoder}: on its event loop when small, else on the worker pool). Answers {@link Addresses#DECODE}
 * with {@link DecodedFrames}; a corrupt segment fails the
 * request with code 500 and the text {@code frame decode failed}.
 */
public final class SegmentDecoderVerticle extends VerticleBase {
  public static final int DECODE_FAILED = 500;

  private final SegmentProcedures segments;
  private final FrameDecoder decoder;

  public SegmentDecoderVerticle(SegmentProcedures segments, FrameDecoder decoder) {
    this.segments = segments;
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
    segments.at(req.partitionId(), req.baseOffset())
        .onSuccess(r -> {
          // only the segment that starts at the requested base offset (a later one may cover it after a merge)
          if (r == null || r.baseOffset() != req.baseOffset()) {
            msg.reply(DecodedFrames.GONE, LocalCodec.OPTIONS);
            return;
          }
          decodeAndReply(msg, req, r.blob());
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
