package io.queenvertx.boot;

import io.queenvertx.kernel.BootException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A node's claim on its {@code QUEEN_DATA_DIR} while its embedded PostgreSQL runs: an operating-system lock on
 * {@code QUEEN_DATA_DIR/node.lock}, which holds the pid of the owning process. The kernel drops the lock when that
 * process ends, by any means ({@code kill -9} included), so:
 * <ul>
 *   <li>a lock that cannot be taken means a live node owns the folder: the start is refused (exit 2) and nothing in
 *       the folder is touched;</li>
 *   <li>a lock taken means no live node owns it: a PostgreSQL still running there is an orphan that may be stopped
 *       ({@link EmbeddedDatabase}).</li>
 * </ul>
 * A node of an earlier version takes no {@code node.lock}, but its PostgreSQL launcher holds {@code pg/epg-lock} while
 * its server runs; that lock is probed too. The file is never deleted (a deleted lock file lets two processes lock two
 * different files under one name).
 */
final class DataFolderLock implements AutoCloseable {
  static final String FILE = "node.lock";
  private static final Set<PosixFilePermission> OWNER_RW = PosixFilePermissions.fromString("rw-------");
  /** Folders locked by this JVM: a second channel on a locked file must not even be opened (closing it would drop
   * the lock, POSIX locks being per process). */
  private static final Set<Path> HELD = ConcurrentHashMap.newKeySet();

  private final Path dataDir;
  private final FileChannel channel;

  private DataFolderLock(Path dataDir, FileChannel channel) {
    this.dataDir = dataDir;
    this.channel = channel;
  }

  /** Locks {@code dataDir} (which must exist) for this process, or throws a one-line {@link BootException} (exit 2). */
  static DataFolderLock acquire(Path folder) throws IOException {
    Path dataDir = folder.toAbsolutePath().normalize();
    Path file = dataDir.resolve(FILE);
    if (!HELD.add(dataDir)) throw inUse(dataDir, file, "this process (pid " + ProcessHandle.current().pid() + ")");
    FileChannel channel = null;
    try {
      channel = FileChannel.open(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ,
          StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(OWNER_RW));
      FileLock lock = channel.tryLock();
      if (lock == null) throw inUse(dataDir, file, holder(file));
      probeEarlierNode(dataDir.resolve("pg").resolve("epg-lock"));
      channel.truncate(0);
      channel.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.US_ASCII)), 0);
      channel.force(false);
      return new DataFolderLock(dataDir, channel);
    } catch (IOException | RuntimeException e) {
      if (channel != null) channel.close();
      HELD.remove(dataDir);
      throw e;
    }
  }

  /** The process named in the lock file: its pid and, when known, its program. */
  private static String holder(Path file) {
    long pid;
    try {
      pid = Long.parseLong(Files.readString(file, StandardCharsets.US_ASCII).trim());
    } catch (IOException | NumberFormatException e) {
      return "a process (its pid not written yet)";
    }
    String program = ProcessHandle.of(pid).flatMap(h -> h.info().command())
        .map(c -> " (" + Path.of(c).getFileName() + ")").orElse("");
    return "process " + pid + program;
  }

  /** Refuses the folder while a node of an earlier version still holds its PostgreSQL launcher's lock. */
  static void probeEarlierNode(Path epgLock) throws IOException {
    if (!Files.exists(epgLock)) return;
    try (FileChannel probe = FileChannel.open(epgLock, StandardOpenOption.WRITE)) {
      FileLock lock;
      try {
        lock = probe.tryLock();
      } catch (OverlappingFileLockException e) {
        lock = null;
      }
      if (lock == null) {
        throw new BootException("data folder " + epgLock.getParent().getParent() + " (QUEEN_DATA_DIR) is in use: "
            + "another process holds " + epgLock + " (a node of an earlier version?); stop it or give this node "
            + "another QUEEN_DATA_DIR", 2);
      }
      lock.release();
    }
  }

  private static BootException inUse(Path dataDir, Path file, String holder) {
    return new BootException("data folder " + dataDir + " (QUEEN_DATA_DIR) is in use by another node: " + holder
        + " holds " + file + "; stop it or give this node another QUEEN_DATA_DIR", 2);
  }

  /** Releases the folder (closing the channel drops the lock); idempotent. */
  @Override
  public synchronized void close() {
    if (!channel.isOpen()) return;
    try {
      channel.close();
    } catch (IOException e) {
      // the kernel drops the lock with the descriptor anyway
    } finally {
      HELD.remove(dataDir);
    }
  }
}
