package io.queenvertx.bench;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The generator's JSON, read and written with Jackson's streaming API, as a lean client would: a pop response yields
 * only what an ack needs (the payloads are skipped, not built into maps), ack bodies are generated directly, and ack
 * verdicts are counted without building a tree. On two cores the generator shares the CPU with the broker and
 * PostgreSQL, so every cycle it spends is taken from what is being measured.
 */
final class Wire {
  private static final JsonFactory JSON = new JsonFactory();

  /** What acking one popped message needs. */
  record Popped(String transactionId, String partitionId, String leaseId) {}

  /** Counted ack verdicts, with the first error text seen. */
  record AckCount(int ok, int bad, String firstError) {}

  private Wire() {}

  /** The messages of a pop response body ({@code {"messages":[{...}, ...], ...}}); empty when there are none. */
  static List<Popped> popped(Buffer body) {
    List<Popped> out = new ArrayList<>();
    try (JsonParser p = JSON.createParser(body.getBytes())) {
      if (p.nextToken() != JsonToken.START_OBJECT) throw new IllegalStateException("pop body is not an object");
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        JsonToken v = p.nextToken();
        if (!"messages".equals(name) || v != JsonToken.START_ARRAY) {
          p.skipChildren();
          continue;
        }
        while (p.nextToken() == JsonToken.START_OBJECT) {
          String txn = null;
          String pid = null;
          String lease = null;
          while (p.nextToken() == JsonToken.FIELD_NAME) {
            String f = p.currentName();
            JsonToken t = p.nextToken();
            switch (f) {
              case "transactionId" -> txn = t == JsonToken.VALUE_NULL ? null : p.getText();
              case "partitionId" -> pid = t == JsonToken.VALUE_NULL ? null : p.getText();
              case "leaseId" -> lease = t == JsonToken.VALUE_NULL ? null : p.getText();
              default -> p.skipChildren();
            }
          }
          out.add(new Popped(txn, pid, lease));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** {@code {"consumerGroup":..., "acknowledgments":[{transactionId, partitionId, leaseId, status:"completed"}]}}. */
  static Buffer ackBody(String group, List<Popped> msgs) {
    return ackBody(group, msgs, "completed");
  }

  /** The same ack body with another status for every item (e.g. {@code "dlq"}: dead-letter at once). */
  static Buffer ackBody(String group, List<Popped> msgs, String status) {
    ByteArrayBuilder bytes = new ByteArrayBuilder(64 + msgs.size() * 160);
    try (JsonGenerator g = JSON.createGenerator(bytes, JsonEncoding.UTF8)) {
      g.writeStartObject();
      if (group != null) g.writeStringField("consumerGroup", group);
      g.writeArrayFieldStart("acknowledgments");
      for (Popped m : msgs) {
        g.writeStartObject();
        g.writeStringField("transactionId", m.transactionId());
        g.writeStringField("partitionId", m.partitionId());
        g.writeStringField("leaseId", m.leaseId());
        g.writeStringField("status", status);
        g.writeEndObject();
      }
      g.writeEndArray();
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return Buffer.buffer(bytes.toByteArray());
  }

  /** How many items of an ack response answered {@code "dlq":true} (the message was dead-lettered). */
  static int dlqCount(Buffer body) {
    int n = 0;
    try (JsonParser p = JSON.createParser(body.getBytes())) {
      JsonToken t;
      while ((t = p.nextToken()) != null) {
        if (t == JsonToken.FIELD_NAME && "dlq".equals(p.currentName()) && p.nextToken() == JsonToken.VALUE_TRUE) n++;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return n;
  }

  /** Counts the items of an ack response ({@code [{"success":true|false, "error":...}, ...]}). */
  static AckCount ackResults(Buffer body) {
    int ok = 0;
    int bad = 0;
    String firstError = null;
    try (JsonParser p = JSON.createParser(body.getBytes())) {
      if (p.nextToken() != JsonToken.START_ARRAY) throw new IllegalStateException("ack body is not an array");
      while (p.nextToken() == JsonToken.START_OBJECT) {
        boolean success = false;
        String error = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String f = p.currentName();
          JsonToken t = p.nextToken();
          if ("success".equals(f)) success = t == JsonToken.VALUE_TRUE;
          else if ("error".equals(f) && t == JsonToken.VALUE_STRING) error = p.getText();
          else p.skipChildren();
        }
        if (success) ok++;
        else {
          bad++;
          if (firstError == null) firstError = String.valueOf(error);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new AckCount(ok, bad, firstError);
  }
}
