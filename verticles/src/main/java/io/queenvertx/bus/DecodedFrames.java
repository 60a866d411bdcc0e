package io.queenvertx.bus;

import io.queenvertx.codec.Frame;
import java.util.List;

/**
 * Frames of one segment as the decoder answers them: {@code payloads.get(i)} is frame i's payload after decryption
 * when a key is configured and the payload sniffs as an envelope, else as stored; {@code decrypted.get(i)} says which.
 * {@code found} is false when the segment no longer exists.
 */
public record DecodedFrames(boolean found, List<Frame> frames, List<byte[]> payloads, List<Boolean> decrypted) {
  public static final DecodedFrames GONE = new DecodedFrames(false, List.of(), List.of(), List.of());
}
