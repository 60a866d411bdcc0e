package io.queenvertx.log;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The on-disk push spool (ENGINE.md §9.5): pushes that cannot reach PostgreSQL (push maintenance, or a failed write)
 * are appended here and replayed into the log later with their original transaction ids, so dedup makes a replay
 * idempotent.
 *
 * <p>Format: records {@code [u32 LE length][JSON event]}, event {@code {tenant, queue, partition, transactionId,
 * producerSub, encrypted, payload}} where payload is the stored JSON text (an envelope for encrypted queues). The
 * active file is {@code queen-<13-digit ms>-<8-digit seq>.tmp}; it becomes {@code .buf} when full or at drain time,
 * so lexical order is FIFO order. Every append is forced to disk before the caller answers {@code buffered}. Used
 * only from the log writer's (single) worker thread.
 */
final class Spool {
  record Event(String tenant, String queue, String partition, String transactionId, String producerSub,
               boolean encrypted, byte[] payload) {}

  private final Path dir;
  private final int eventsPerFile;
  private FileChannel active;
  private Path activePath;
  private int activeEvents;
  private long seq;
  /** Events on disk, kept as a counter so readers (metrics, the admin route) never touch the files. */
  private final java.util.concurrent.atomic.AtomicLong pending = new java.util.concurrent.atomic.AtomicLong();

  Spool(Path dir, int eventsPerFile) throws IOException {
    this.dir = dir;
    this.eventsPerFile = Math.max(1, eventsPerFile);
    Files.createDirectories(dir);
    // A crash leaves the active file as .tmp: it holds acknowledged events, so it is promoted and drained.
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.filter(p -> p.getFileName().toString().endsWith(".tmp")).toList()) seal(p);
    }
    for (Path p : sealed()) pending.addAndGet(read(p).size());
  }

  /** Appends and forces the events; throws when they may not be on disk. */
  void append(List<Event> events) throws IOException {
    if (active == null) open();
    List<ByteBuffer> bufs = new ArrayList<>(events.size() * 2);
    for (Event e : events) {
      byte[] json = new JsonObject()
          .put("tenant", e.tenant()).put("queue", e.queue()).put("partition", e.partition())
          .put("transactionId", e.transactionId()).put("producerSub", e.producerSub())
          .put("encrypted", e.encrypted()).put("payload", new String(e.payload(), StandardCharsets.UTF_8))
          .encode().getBytes(StandardCharsets.UTF_8);
      bufs.add(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(json.length).flip());
      bufs.add(ByteBuffer.wrap(json));
    }
    ByteBuffer[] arr = bufs.toArray(ByteBuffer[]::new);
    while (hasRemaining(arr)) active.write(arr);
    active.force(false);
    activeEvents += events.size();
    pending.addAndGet(events.size());
    if (activeEvents >= eventsPerFile) rotate();
  }

  private static boolean hasRemaining(ByteBuffer[] arr) {
    for (ByteBuffer b : arr) if (b.hasRemaining()) return true;
    return false;
  }

  private void open() throws IOException {
    activePath = dir.resolve(String.format("queen-%013d-%08d.tmp", System.currentTimeMillis(), seq++));
    active = FileChannel.open(activePath, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    activeEvents = 0;
  }

  /** Closes the active file so the drain can take it. */
  void rotate() throws IOException {
    if (active == null || activeEvents == 0) return;
    active.close();
    active = null;
    activeEvents = 0;
    seal(activePath);
  }

  private static void seal(Path tmp) throws IOException {
    String name = tmp.getFileName().toString();
    Files.move(tmp, tmp.resolveSibling(name.substring(0, name.length() - 4) + ".buf"),
        StandardCopyOption.ATOMIC_MOVE);
  }

  /** Sealed files, oldest first. */
  List<Path> sealed() throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().endsWith(".buf")).sorted().toList();
    }
  }

  static List<Event> read(Path file) throws IOException {
    byte[] all = Files.readAllBytes(file);
    ByteBuffer b = ByteBuffer.wrap(all).order(ByteOrder.LITTLE_ENDIAN);
    List<Event> out = new ArrayList<>();
    while (b.remaining() >= 4) {
      int len = b.getInt();
      if (len < 0 || len > b.remaining()) break; // a torn tail record was never acknowledged
      byte[] json = new byte[len];
      b.get(json);
      JsonObject o = new JsonObject(new String(json, StandardCharsets.UTF_8));
      out.add(new Event(o.getString("tenant"), o.getString("queue"), o.getString("partition"),
          o.getString("transactionId"), o.getString("producerSub"), o.getBoolean("encrypted", false),
          o.getString("payload", "null").getBytes(StandardCharsets.UTF_8)));
    }
    return out;
  }

  /** Events waiting on disk (sealed files and the active one). */
  long pendingEvents() {
    return pending.get();
  }

  /** Removes a replayed file of {@code events} events. */
  void delete(Path file, int events) throws IOException {
    Files.deleteIfExists(file);
    pending.addAndGet(-events);
  }

  void moveToFailed(Path file, int events) throws IOException {
    pending.addAndGet(-events);
    Path failed = dir.resolve("failed");
    Files.createDirectories(failed);
    Files.move(file, failed.resolve(file.getFileName()), StandardCopyOption.ATOMIC_MOVE);
  }
}
