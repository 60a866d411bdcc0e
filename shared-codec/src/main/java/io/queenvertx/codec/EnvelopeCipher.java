package io.queenvertx.codec;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Payload encryption as Queen does it (ENGINE.md §10): AES-256-GCM, with the result stored as the JSON envelope
 * {@code {"encrypted":"<b64 ciphertext>","iv":"<b64 16 bytes>","authTag":"<b64 16 bytes>"}}, standard base64
 * with padding.
 *
 * <p>Invariants:
 * <ul>
 *   <li>Every {@link #encrypt} draws a fresh 16-byte IV from a {@link SecureRandom}. Only its first 12 bytes are
 *       the GCM nonce, for compatibility with the old C++ broker; the other 4 are stored and ignored. No additional
 *       authenticated data is used.</li>
 *   <li>{@link #tryDecrypt} never throws: a payload that is not an envelope, or that does not authenticate under
 *       this key, yields empty and the caller serves the stored bytes as they are (§10 "Read").</li>
 *   <li>Whether a payload is an envelope is decided by its shape alone, never by the frame's encrypted flag.</li>
 * </ul>
 * Thread-safe: the key is immutable and each thread uses its own {@link Cipher}, initialised on every call.
 */
public final class EnvelopeCipher {

  public static final int KEY_HEX_CHARS = 64;
  public static final int IV_BYTES = 16;
  public static final int NONCE_BYTES = 12;
  public static final int TAG_BYTES = 16;

  static final String KEY_CIPHERTEXT = "encrypted";
  static final String KEY_IV = "iv";
  static final String KEY_TAG = "authTag";

  private static final String TRANSFORMATION = "AES/GCM/NoPadding";
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final ThreadLocal<Cipher> AES_GCM = ThreadLocal.withInitial(() -> {
    try {
      return Cipher.getInstance(TRANSFORMATION);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(TRANSFORMATION + " is unavailable in this JVM", e);
    }
  });

  private final SecretKeySpec key;

  private EnvelopeCipher(byte[] key) {
    this.key = new SecretKeySpec(key, "AES");
  }

  /**
   * A cipher for {@code QUEEN_ENCRYPTION_KEY}.
   *
   * @throws IllegalArgumentException unless {@code hex64} is exactly 64 ASCII hex digits (either case); the
   *     message never echoes the key
   */
  public static EnvelopeCipher fromHex(String hex64) {
    if (hex64 == null) {
      throw new IllegalArgumentException("encryption key is missing; expected " + KEY_HEX_CHARS + " hex characters");
    }
    if (hex64.length() != KEY_HEX_CHARS) {
      throw new IllegalArgumentException("encryption key must be exactly " + KEY_HEX_CHARS
          + " hex characters (32 bytes for AES-256), got " + hex64.length() + " characters");
    }
    byte[] key = new byte[KEY_HEX_CHARS / 2];
    for (int i = 0; i < key.length; i++) {
      int hi = hexDigit(hex64.charAt(2 * i));
      int lo = hexDigit(hex64.charAt(2 * i + 1));
      if (hi < 0 || lo < 0) {
        int at = hi < 0 ? 2 * i : 2 * i + 1;
        throw new IllegalArgumentException(
            "encryption key must be " + KEY_HEX_CHARS + " hex characters; character " + at + " is not [0-9a-fA-F]");
      }
      key[i] = (byte) ((hi << 4) | lo);
    }
    return new EnvelopeCipher(key);
  }

  /** ASCII only: Character.digit would also accept e.g. fullwidth or Arabic-Indic digits. */
  private static int hexDigit(char c) {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  }

  /**
   * Encrypts a payload into envelope JSON text (pure ASCII).
   *
   * @throws IllegalStateException if the JCE fails, which a valid AES key never makes it do; the broker then fails
   *     the item rather than store plaintext (issue 18, item 6)
   */
  public String encrypt(byte[] plaintextJson) {
    Objects.requireNonNull(plaintextJson, "plaintextJson");
    byte[] iv = new byte[IV_BYTES];
    RANDOM.nextBytes(iv);
    return encrypt(plaintextJson, iv);
  }

  /** {@link #encrypt} with a given IV; package-private so a known-answer test can pin the output. */
  String encrypt(byte[] plaintextJson, byte[] iv) {
    if (iv.length != IV_BYTES) {
      throw new IllegalArgumentException("iv must be " + IV_BYTES + " bytes");
    }
    byte[] sealed;
    try {
      Cipher cipher = AES_GCM.get();
      cipher.init(Cipher.ENCRYPT_MODE, key, new GCMParameterSpec(TAG_BYTES * 8, iv, 0, NONCE_BYTES));
      sealed = cipher.doFinal(plaintextJson);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM encryption failed", e);
    }
    // The JCE appends the tag to the ciphertext; the envelope stores it under its own key.
    int ctLength = sealed.length - TAG_BYTES;
    Base64.Encoder b64 = Base64.getEncoder();
    return "{\"" + KEY_CIPHERTEXT + "\":\"" + b64.encodeToString(Arrays.copyOf(sealed, ctLength))
        + "\",\"" + KEY_IV + "\":\"" + b64.encodeToString(iv)
        + "\",\"" + KEY_TAG + "\":\"" + b64.encodeToString(Arrays.copyOfRange(sealed, ctLength, sealed.length))
        + "\"}";
  }

  /** {@link #encrypt} as the bytes a frame payload holds. */
  public byte[] encryptToBytes(byte[] plaintextJson) {
    return encrypt(plaintextJson).getBytes(StandardCharsets.US_ASCII);
  }

  /**
   * The plaintext inside an envelope, or empty if {@code storedJson} is not an envelope, is not decodable base64,
   * has an IV shorter than the nonce or a tag other than 16 bytes, or fails authentication (wrong key, tampering).
   */
  public Optional<byte[]> tryDecrypt(byte[] storedJson) {
    Optional<String[]> fields = envelopeFields(storedJson);
    if (fields.isEmpty()) {
      return Optional.empty();
    }
    try {
      Base64.Decoder b64 = Base64.getDecoder();
      byte[] ciphertext = b64.decode(fields.get()[0]);
      byte[] iv = b64.decode(fields.get()[1]);
      byte[] tag = b64.decode(fields.get()[2]);
      // IVs are 16 bytes when Queen writes them; anything with a full nonce is tried, since only 12 bytes matter.
      if (iv.length < NONCE_BYTES || tag.length != TAG_BYTES) {
        return Optional.empty();
      }
      byte[] sealed = Arrays.copyOf(ciphertext, ciphertext.length + TAG_BYTES);
      System.arraycopy(tag, 0, sealed, ciphertext.length, TAG_BYTES);
      Cipher cipher = AES_GCM.get();
      cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BYTES * 8, iv, 0, NONCE_BYTES));
      return Optional.of(cipher.doFinal(sealed));
    } catch (GeneralSecurityException | RuntimeException e) {
      // AEADBadTagException (wrong key, tampering) or bad base64: by contract the stored bytes are served as-is.
      return Optional.empty();
    }
  }

  /**
   * Whether {@code json} is a JSON object holding string members {@code encrypted}, {@code iv} and {@code authTag}
   * (and only string members). Says nothing about whether it decrypts.
   */
  public static boolean looksLikeEnvelope(byte[] json) {
    return envelopeFields(json).isPresent();
  }

  /** {ciphertext, iv, tag} as base64 text, if {@code json} has the envelope's shape. */
  private static Optional<String[]> envelopeFields(byte[] json) {
    if (json == null || !startsWithBrace(json)) {
      return Optional.empty(); // cheap exit for the common non-object payload
    }
    Optional<Map<String, String>> object = FlatJsonObject.parse(json);
    if (object.isEmpty()) {
      return Optional.empty();
    }
    Map<String, String> m = object.get();
    String ct = m.get(KEY_CIPHERTEXT);
    String iv = m.get(KEY_IV);
    String tag = m.get(KEY_TAG);
    if (ct == null || iv == null || tag == null) {
      return Optional.empty();
    }
    return Optional.of(new String[] {ct, iv, tag});
  }

  private static boolean startsWithBrace(byte[] json) {
    for (byte b : json) {
      if (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
        return b == '{';
      }
    }
    return false;
  }

  /** Never shows the key. */
  @Override
  public String toString() {
    return "EnvelopeCipher[AES-256-GCM]";
  }
}
