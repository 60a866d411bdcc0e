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
 * so lexical order is FIFO order. Every append is forced to disk before the caller answers {@code buffered}; an
 * append that fails (a full disk) is cut off the file again before the caller answers {@code failed}. Used
 * only from the log writer's spool tasks on the worker pool, which run one at a time in order ({@link Offload#disk});
 * its counters are atomics, read by the metrics.
 *
 * <p>A file is replayed until the database takes every event of it: the landed events are cut out of the file as the
 * replay goes ({@link #rewrite}), and an event the database will never accept is set aside alone into
 * {@code failed/} as one {@code .rejected.json} record with its reason ({@link #reject}). Whole spool files found in
 * {@code failed/} were put there by older versions after a number of failed replays, good events included: they are
 * moved back at start and replayed like any other.
 */
final class Spool {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(Spool.class);

  record Event(String tenant, String queue, String partition, String transactionId, String producerSub,
               boolean encrypted, byte[] payload) {}

  private final Path dir;
  private final int eventsPerFile;
  private FileChannel active;
  private Path activePath;
  private int activeEvents;
  /** The active file's length up to its last append taken; whatever lies beyond it was never acknowledged. */
  private long activeBytes;
  /** An append failed and its bytes may still lie past {@code activeBytes}: cut them before the file goes on. */
  private boolean torn;
  /** Files closed for the drain whose rename to {@code .buf} failed: tried again by {@link #rotate}. */
  private final List<Path> unsealed = new ArrayList<>();
  private long seq;
  /** Events on disk, kept as a counter so readers (metrics, the admin route) never touch the files. */
  private final java.util.concurrent.atomic.AtomicLong pending = new java.util.concurrent.atomic.AtomicLong();
  /** Rejected-event records in {@code failed/}. */
  private final java.util.concurrent.atomic.AtomicLong rejected = new java.util.concurrent.atomic.AtomicLong();
  private long rejectSeq;

  Spool(Path dir, int eventsPerFile) throws IOException {
    this.dir = dir;
    this.eventsPerFile = Math.max(1, eventsPerFile);
    Files.createDirectories(dir);
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.toList()) {
        String name = p.getFileName().toString();
        // A crash leaves the active file as .tmp: it holds acknowledged events, so it is promoted and drained.
        if (name.endsWith(".tmp")) seal(p);
        // A crash during a rewrite leaves its .new beside the intact original, which still holds every event.
        else if (name.endsWith(".new")) Files.deleteIfExists(p);
      }
    }
    Path failed = failedDir();
    if (Files.isDirectory(failed)) {
      try (Stream<Path> s = Files.list(failed)) {
        for (Path p : s.toList()) {
          String name = p.getFileName().toString();
          if (name.endsWith(".rejected.json")) {
            rejected.incrementAndGet();
          } else if (name.endsWith(".buf")) {
            // Older versions moved whole files here after a run of failed replays, good events with them: replay
            // them (their transaction ids are the original ones, so dedup drops what had landed already).
            Path back = dir.resolve(name);
            if (Files.exists(back)) back = dir.resolve(name.substring(0, name.length() - 4) + "-recovered.buf");
            Files.move(p, back, StandardCopyOption.ATOMIC_MOVE);
            log.warn("spool file failed/{} moved back for replay", name);
          }
        }
      }
    }
    for (Path p : sealed()) pending.addAndGet(read(p).size());
  }

  private Path failedDir() {
    return dir.resolve("failed");
  }

  private static JsonObject json(Event e) {
    return new JsonObject()
        .put("tenant", e.tenant()).put("queue", e.queue()).put("partition", e.partition())
        .put("transactionId", e.transactionId()).put("producerSub", e.producerSub())
        .put("encrypted", e.encrypted()).put("payload", new String(e.payload(), StandardCharsets.UTF_8));
  }

  private static ByteBuffer[] records(List<Event> events) {
    List<ByteBuffer> bufs = new ArrayList<>(events.size() * 2);
    for (Event e : events) {
      byte[] json = json(e).encode().getBytes(StandardCharsets.UTF_8);
      bufs.add(ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(json.length).flip());
      bufs.add(ByteBuffer.wrap(json));
    }
    return bufs.toArray(ByteBuffer[]::new);
  }

  /** Writes a spool file of {@code events} (tests use it to lay out a spool). */
  static void write(Path file, List<Event> events) throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ByteBuffer[] arr = records(events);
      while (hasRemaining(arr)) ch.write(arr);
      ch.force(false);
    }
  }

  /**
   * Appends and forces the events: when it returns they are on disk and counted, and will be replayed. When it throws
   * (a full disk, an I/O error) none of them is: whatever part of them reached the file (a full disk takes a write
   * up to its last free block) is cut off again before anything else is written there, so an event refused here is
   * never replayed, and the records after it stay readable.
   */
  void append(List<Event> events) throws IOException {
    if (active == null) open();
    cut();
    ByteBuffer[] arr = records(events);
    try {
      while (hasRemaining(arr)) active.write(arr);
      active.force(false);
    } catch (IOException e) {
      torn = true;
      try {
        cut();
      } catch (IOException again) {
        // the file stays torn: nothing more is appended to it nor is it sealed until a later cut succeeds
        e.addSuppressed(again);
      }
      throw e;
    }
    activeBytes = active.position();
    activeEvents += events.size();
    pending.addAndGet(events.size());
    if (activeEvents >= eventsPerFile) {
      try {
        rotate();
      } catch (IOException e) {
        // the events are on disk and counted: the drain's next rotate seals the file
        log.warn("spool file {} not sealed yet: {}", activePath.getFileName(), e.toString());
      }
    }
  }

  /** After a failed append, truncates the active file back to its last append taken, and forces that. */
  private void cut() throws IOException {
    if (!torn) return;
    active.truncate(activeBytes);
    active.position(activeBytes);
    active.force(true);
    torn = false;
  }

  private static boolean hasRemaining(ByteBuffer[] arr) {
    for (ByteBuffer b : arr) if (b.hasRemaining()) return true;
    return false;
  }

  private void open() throws IOException {
    activePath = dir.resolve(String.format("queen-%013d-%08d.tmp", System.currentTimeMillis(), seq++));
    active = FileChannel.open(activePath, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    activeEvents = 0;
    activeBytes = 0;
    torn = false;
  }

  /** Closes the active file, cut back to its last append taken, so the drain can take it. */
  void rotate() throws IOException {
    if (active != null && activeEvents > 0) {
      cut();
      try {
        active.close();
      } finally {
        active = null;
        activeEvents = 0;
        unsealed.add(activePath);
      }
    }
    while (!unsealed.isEmpty()) {
      seal(unsealed.get(0));
      unsealed.remove(0);
    }
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

  /** Rejected-event records in {@code failed/}. */
  long rejectedEvents() {
    return rejected.get();
  }

  /** Removes a file whose every event landed or was set aside (already counted off by {@link #rewrite}). */
  void delete(Path file, int events) throws IOException {
    Files.deleteIfExists(file);
    pending.addAndGet(-events);
  }

  /**
   * Replaces {@code file} by one holding only {@code left} (its events not landed yet), {@code removed} events fewer:
   * written beside it, forced, then moved over it atomically, so a crash leaves either file whole.
   */
  void rewrite(Path file, List<Event> left, int removed) throws IOException {
    Path next = file.resolveSibling(file.getFileName() + ".new");
    Files.deleteIfExists(next);
    try {
      write(next, left);
      Files.move(next, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      // the original still holds every event; a partial copy would only take room from the spool's appends
      deleteQuietly(next, e);
      throw e;
    }
    pending.addAndGet(-removed);
  }

  /**
   * Sets one event the database will never accept aside as {@code failed/queen-<ms>-<seq>.rejected.json}: the event
   * and the reason. The caller then drops it from its file.
   */
  void reject(Event e, String reason) throws IOException {
    Path failed = failedDir();
    Files.createDirectories(failed);
    Path file = failed.resolve(String.format("queen-%013d-%08d.rejected.json", System.currentTimeMillis(),
        rejectSeq++));
    try {
      Files.write(file, json(e).put("reason", reason).encodePrettily().getBytes(StandardCharsets.UTF_8),
          StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, StandardOpenOption.SYNC);
    } catch (java.nio.file.FileAlreadyExistsException taken) {
      throw taken;
    } catch (IOException notWritten) {
      // not set aside: the event stays in its file (a torn record here would be counted at the next start)
      deleteQuietly(file, notWritten);
      throw notWritten;
    }
    rejected.incrementAndGet();
  }

  private static void deleteQuietly(Path file, IOException cause) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      cause.addSuppressed(e);
    }
  }
}
