package io.queenvertx.http.server;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.impl.VertxHttpRequestDecoder;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * The HTTP/1.1 request decoder of every connection, refusing ambiguous message framing (issue 34, request smuggling):
 * when a proxy in front and this node could disagree on where a request's body ends, the bytes after it could be read
 * as a second request that the proxy never saw. RFC 9112 §6.1 and §6.3 make these errors; here each is a 400 after
 * which the connection is closed and nothing more on it is read:
 * <ul>
 *   <li>{@code Transfer-Encoding} together with {@code Content-Length} (Netty would drop the length and read chunks);
 *   <li>{@code Transfer-Encoding} that is not exactly one {@code chunked} (a list such as {@code chunked, identity},
 *       an unknown coding, the header twice, or a value folded over lines (obs-fold), which Netty joins with a space);
 *   <li>{@code Transfer-Encoding} in an HTTP/1.0 request;
 *   <li>a {@code Content-Length} that is not plain digits (Netty already refuses differing or repeated lengths).
 * </ul>
 *
 * <p>It is Vert.x's own decoder with two checks added where Netty has read the headers and not yet decided the
 * framing: a check that throws there makes Netty mark the request invalid and discard every later byte of the
 * connection, and the server answers through {@link #onInvalid} and closes the connection. {@link #install} puts it
 * in place of Vert.x's decoder when a connection opens, before its first byte is read.
 */
public final class StrictFraming extends VertxHttpRequestDecoder {
  private static final String DECODER = "httpDecoder";

  /** The framing fault of one request; its message goes to the client. */
  public static final class AmbiguousFraming extends IllegalArgumentException {
    AmbiguousFraming(String message) {
      super(message, null);
    }
  }

  private StrictFraming(HttpServerOptions options) {
    super(options);
  }

  /** Replaces Vert.x's request decoder of a new HTTP/1.x connection with this one. */
  public static void install(HttpConnection connection, HttpServerOptions options) {
    if (!(connection instanceof io.vertx.core.net.impl.ConnectionBase base)) return;
    var pipeline = base.channel().pipeline();
    if (pipeline.get(DECODER) instanceof VertxHttpRequestDecoder) {
      pipeline.replace(DECODER, DECODER, new StrictFraming(options));
    }
  }

  /** Called by Netty for every request once its headers are read, before the body's framing is chosen. */
  @Override
  protected boolean isContentAlwaysEmpty(HttpMessage msg) {
    String problem = problem(msg);
    if (problem != null) throw new AmbiguousFraming(problem);
    return super.isContentAlwaysEmpty(msg);
  }

  /** Netty's hook for the two together (its default drops the length); the check above already refused them. */
  @Override
  protected void handleTransferEncodingChunkedWithContentLength(HttpMessage msg) {
    throw new AmbiguousFraming("ambiguous request framing: Transfer-Encoding and Content-Length together");
  }

  /** Why the framing headers of {@code msg} are ambiguous, or null. */
  public static String problem(HttpMessage msg) {
    var headers = msg.headers();
    for (String length : headers.getAll(HttpHeaderNames.CONTENT_LENGTH)) {
      if (length.isEmpty() || !length.chars().allMatch(c -> c >= '0' && c <= '9')) {
        return "ambiguous request framing: Content-Length must be digits only";
      }
    }
    List<String> codings = headers.getAll(HttpHeaderNames.TRANSFER_ENCODING);
    if (codings.isEmpty()) return null;
    HttpVersion v = msg.protocolVersion();
    if (v.majorVersion() != 1 || v.minorVersion() != 1) {
      return "ambiguous request framing: Transfer-Encoding in an HTTP/1.0 request";
    }
    if (headers.contains(HttpHeaderNames.CONTENT_LENGTH)) {
      return "ambiguous request framing: Transfer-Encoding and Content-Length together";
    }
    if (codings.size() != 1 || !codings.get(0).equalsIgnoreCase("chunked")) {
      return "ambiguous request framing: Transfer-Encoding must be exactly chunked";
    }
    return null;
  }

  /**
   * The server's handler of requests the decoder marked invalid: Vert.x's own answer (414 for a request line too long,
   * 431 for headers too large, else 400) with {@code Connection: close}, so that a client does not send its next
   * request on a connection that is being closed; a framing fault's 400 carries the error envelope naming it.
   */
  public static void onInvalid(HttpServerRequest request) {
    Throwable cause = request.decoderResult().cause();
    int status = cause instanceof TooLongHttpLineException ? 414
        : cause instanceof TooLongHttpHeaderException ? 431 : 400;
    var response = request.response().setStatusCode(status).putHeader("connection", "close");
    if (cause instanceof AmbiguousFraming f) {
      response.putHeader("content-type", ErrorContract.JSON)
          .end(new JsonObject().put("error", f.getMessage()).toBuffer());
    } else {
      response.end();
    }
    request.connection().close();
  }
}
