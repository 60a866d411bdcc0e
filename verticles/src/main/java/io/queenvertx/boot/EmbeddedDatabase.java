package io.queenvertx.boot;

import io.queenvertx.kernel.Config;
import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import io.zonky.test.db.postgres.util.LinuxUtils;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PostgreSQL a node starts for itself when no {@code PG_HOST} is configured. Its files live under
 * {@code QUEEN_DATA_DIR/pg}, so messages survive a restart of the node.
 *
 * <p>PostgreSQL refuses to run as root. The zonky launcher detects uid 0 and runs initdb and the server inside a user
 * namespace ({@code unshare -U}), where the process is unprivileged; the files stay owned by the invoking user outside,
 * so the same data folder works across restarts as root and as an ordinary user.
 *
 * <p>Access: the server listens on 127.0.0.1 only, has no Unix socket, and its {@code pg_hba.conf} holds nothing but
 * {@code scram-sha-256} entries for 127.0.0.1/32 and ::1/128 (no {@code trust}). The superuser {@code postgres} has a
 * random password generated on first start and kept in {@code QUEEN_DATA_DIR/pg-password} (mode 0600; a data folder
 * the node creates is 0700, an existing one it owns loses group and other access). The password is set, and
 * pg_hba.conf rewritten, while the server is down, by a single-user backend; so a folder initialised by an older node
 * (trust, no password) is upgraded in place on its next start.
 *
 * <p>Ownership: the node holds {@link DataFolderLock} on {@code QUEEN_DATA_DIR} from before it looks at the folder
 * until its server has stopped. A folder whose lock another live process holds is refused in one line (exit 2), and
 * nothing in it is touched.
 *
 * <p>Lifetime: a small shell watchdog is started next to the server with its standard input a pipe from this JVM.
 * When the JVM dies by any means, even SIGKILL, the pipe closes and the watchdog fast-stops the server it was started
 * for, unless {@code postmaster.pid} by then names another process (a newer node owns the folder). Should a server
 * survive anyway, the next node stops it ({@link #stopOrphan}), which it does only holding the lock: the owner of
 * that server is then provably gone.
 */
public final class EmbeddedDatabase implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(EmbeddedDatabase.class);

  /** Name of the password file inside {@code QUEEN_DATA_DIR}. */
  public static final String PASSWORD_FILE = "pg-password";
  static final String SUPERUSER = "postgres";
  /** The whole pg_hba.conf this class keeps: password (SCRAM) over loopback TCP and nothing else. */
  static final String HBA = """
      # Written by queen-vertx when the embedded PostgreSQL starts; edits are overwritten.
      # Loopback TCP only, SCRAM password required (QUEEN_DATA_DIR/pg-password); nothing else is accepted.
      host    all    all    127.0.0.1/32    scram-sha-256
      host    all    all    ::1/128         scram-sha-256
      """;
  private static final Set<PosixFilePermission> OWNER_RW = PosixFilePermissions.fromString("rw-------");
  private static final Set<PosixFilePermission> OWNER_RWX = PosixFilePermissions.fromString("rwx------");
  private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  private static final int PASSWORD_LENGTH = 40;
  /**
   * The watchdog: {@code $1} the data folder, {@code $2} the postmaster pid. A line on stdin means a clean stop by
   * the node (nothing to do); end of input means the node is gone: stop the postmaster if the folder is still its.
   * Terminal signals are ignored so a Ctrl-C to the node's process group leaves the node to shut down in order.
   */
  private static final String WATCHDOG_SCRIPT = """
      trap '' INT HUP TERM QUIT
      if read -r line; then exit 0; fi
      [ -f "$1/postmaster.pid" ] || exit 0
      read -r owner < "$1/postmaster.pid" || exit 0
      [ "$owner" = "$2" ] || exit 0
      if [ -r "/proc/$2/cmdline" ]; then grep -qF -- "$1" "/proc/$2/cmdline" || exit 0; fi
      kill -INT "$2" 2>/dev/null || exit 0
      i=0
      while kill -0 "$2" 2>/dev/null; do
        i=$((i + 1))
        if [ "$i" -ge 120 ]; then kill -QUIT "$2" 2>/dev/null; exit 0; fi
        sleep 0.5
      done
      """;

  /**
   * zonky's default binaries, unpacked under {@code dir}. zonky caches the unpacked folder per resolver for the life
   * of the JVM; one resolver per folder (record equality) makes it unpack into this data folder's {@code pg-bin},
   * where {@link #postgresBinary} finds the server binary for the single-user step.
   */
  private record BinariesIn(Path dir) implements PgBinaryResolver {
    @Override
    public InputStream getPgBinary(String system, String machineHardware) throws IOException {
      return DefaultPostgresBinaryResolver.INSTANCE.getPgBinary(system, machineHardware);
    }
  }

  /** Watchdogs of open databases: strongly held, since a collected pipe would close and stop a server in use. */
  private static final Set<Process> WATCHDOGS = ConcurrentHashMap.newKeySet();

  private final EmbeddedPostgres postgres;
  private final String password;
  private final Process watchdog;
  private final DataFolderLock lock;

  private EmbeddedDatabase(EmbeddedPostgres postgres, String password, Process watchdog, DataFolderLock lock) {
    this.postgres = postgres;
    this.password = password;
    this.watchdog = watchdog;
    this.lock = lock;
  }

  /**
   * Starts (initialising on first use) the database under {@code dataDir/pg}; {@code port} 0 picks a free one,
   * {@code sharedBuffersMb} sizes its buffer pool. A folder another live node holds is refused with a
   * {@link BootException} (exit 2) before anything in it is touched.
   */
  public static EmbeddedDatabase start(Path dataDir, int port, int maxConnections, int sharedBuffersMb)
      throws IOException {
    boolean created = createPrivate(dataDir);
    DataFolderLock lock = DataFolderLock.acquire(dataDir);
    try {
      return start(dataDir, created, lock, port, maxConnections, sharedBuffersMb);
    } catch (IOException | RuntimeException e) {
      lock.close();
      throw e;
    }
  }

  private static EmbeddedDatabase start(Path dataDir, boolean created, DataFolderLock lock, int port,
                                        int maxConnections, int sharedBuffersMb) throws IOException {
    Path pgData = dataDir.resolve("pg");
    if (!created) tightenDataDir(dataDir);
    // zonky decides between initdb and reuse by whether the folder exists, so a half-initialised folder (a crash
    // during the very first initdb) would never start: only reuse one that has PG_VERSION.
    if (Files.isDirectory(pgData) && !Files.exists(pgData.resolve("PG_VERSION"))) {
      log.warn("embedded PostgreSQL folder {} has no PG_VERSION; re-initialising it", pgData);
      deleteTree(pgData);
    }
    stopOrphan(pgData);
    Path binaries = dataDir.resolve("pg-bin");
    Path passwordFile = dataDir.resolve(PASSWORD_FILE);
    boolean newPassword = !Files.exists(passwordFile);
    String password = newPassword ? writePassword(passwordFile) : readPassword(passwordFile);
    var builder = EmbeddedPostgres.builder()
        .setDataDirectory(pgData)
        .setCleanDataDirectory(false)
        .setRegisterShutdownHook(false)
        .setOverrideWorkingDirectory(binaries.toFile())
        .setPgBinaryResolver(new BinariesIn(binaries))
        .setPGStartupWait(Duration.ofSeconds(60))
        .setServerConfig("max_connections", Integer.toString(maxConnections))
        .setServerConfig("listen_addresses", "127.0.0.1")
        .setServerConfig("unix_socket_directories", "")
        .setServerConfig("password_encryption", "scram-sha-256")
        .setServerConfig("shared_buffers", sharedBuffersMb + "MB")
        .setServerConfig("fsync", "on")
        .setServerConfig("synchronous_commit", "on")
        // zonky's own readiness check logs in as postgres over TCP: it needs the password too
        .setConnectConfig("password", password)
        // runs after initdb (or on an existing folder) and before the server starts
        .setDataDirectoryCustomizer(dir -> {
          try {
            ServerMalloc.wrap(postgresBinary(binaries));
            secure(dir.toPath(), binaries, password, newPassword);
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
    if (port > 0) builder.setPort(port);
    EmbeddedPostgres pg;
    try {
      pg = builder.start();
    } catch (IOException | RuntimeException e) {
      // zonky's own lock on pg/epg-lock taken by another process since DataFolderLock probed it: not our server
      // (zonky says so with an IllegalStateException; the lock itself, probed again, tells whose it is)
      if (e instanceof IllegalStateException) DataFolderLock.probeEarlierNode(pgData.resolve("epg-lock"));
      // zonky gives up without stopping a server it did launch (e.g. one that refused the readiness login)
      stopOrphan(pgData);
      if (e instanceof UncheckedIOException u) throw u.getCause();
      throw e;
    }
    Process watchdog = null;
    try {
      watchdog = startWatchdog(pgData);
      WATCHDOGS.add(watchdog);
    } catch (IOException | RuntimeException e) {
      log.warn("embedded PostgreSQL watchdog did not start ({}); a killed node leaves the server running until the "
          + "next start stops it", e.toString());
    }
    log.info("embedded PostgreSQL running on 127.0.0.1:{} with data in {} (shared_buffers {} MB, password in {})",
        pg.getPort(), pgData, sharedBuffersMb, passwordFile);
    return new EmbeddedDatabase(pg, password, watchdog, lock);
  }

  public Config.Database connection() {
    return new Config.Database("127.0.0.1", postgres.getPort(), "postgres", SUPERUSER, password, false);
  }

  public int port() {
    return postgres.getPort();
  }

  @Override
  public void close() {
    try {
      postgres.close();
      log.info("embedded PostgreSQL stopped");
    } catch (IOException e) {
      log.warn("embedded PostgreSQL did not stop cleanly", e);
    }
    if (watchdog != null) {
      WATCHDOGS.remove(watchdog);
      try (OutputStream in = watchdog.getOutputStream()) {
        in.write("stop\n".getBytes(StandardCharsets.US_ASCII));
      } catch (IOException e) {
        // the watchdog is already gone
      }
      try {
        if (!watchdog.waitFor(5, TimeUnit.SECONDS)) watchdog.destroy();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    lock.close();
  }

  /** Makes the data folder, 0700, when it does not exist yet; true when it did not. */
  private static boolean createPrivate(Path dataDir) throws IOException {
    if (Files.exists(dataDir)) return false;
    Files.createDirectories(dataDir);
    Files.setPosixFilePermissions(dataDir, OWNER_RWX);
    return true;
  }

  /** Takes group and other permissions off an existing data folder this user owns, unless it is a shared sticky
   * folder such as /tmp. */
  private static void tightenDataDir(Path dataDir) throws IOException {
    Object mode = Files.getAttribute(dataDir, "unix:mode");
    boolean sticky = mode instanceof Integer m && (m & 01000) != 0;
    boolean mine = Files.getOwner(dataDir).getName().equals(System.getProperty("user.name"));
    var perms = Files.getPosixFilePermissions(dataDir);
    if (!sticky && mine && !OWNER_RWX.containsAll(perms)) {
      var tightened = java.util.EnumSet.copyOf(perms);
      tightened.retainAll(OWNER_RWX);
      Files.setPosixFilePermissions(dataDir, tightened);
      log.info("data folder {} made private to its owner (was {})", dataDir, PosixFilePermissions.toString(perms));
    }
  }

  /** A new random password in a new owner-only file (created with its mode, then moved into place). */
  private static String writePassword(Path file) throws IOException {
    var random = new SecureRandom();
    var sb = new StringBuilder(PASSWORD_LENGTH);
    for (int i = 0; i < PASSWORD_LENGTH; i++) sb.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
    String password = sb.toString();
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(tmp);
    Files.createFile(tmp, PosixFilePermissions.asFileAttribute(OWNER_RW));
    Files.writeString(tmp, password + "\n", StandardCharsets.US_ASCII);
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
    log.info("generated the embedded PostgreSQL password into {}", file);
    return password;
  }

  private static String readPassword(Path file) throws IOException {
    if (!OWNER_RW.containsAll(Files.getPosixFilePermissions(file))) Files.setPosixFilePermissions(file, OWNER_RW);
    String password = Files.readString(file, StandardCharsets.US_ASCII).trim();
    if (password.isEmpty() || !password.chars().allMatch(c -> ALPHABET.indexOf(c) >= 0)) {
      throw new IOException(file + " must hold the embedded PostgreSQL password (letters and digits); delete it to "
          + "have a new one generated");
    }
    return password;
  }

  /**
   * With the server down: folder 0700, the superuser's password set when it is new or the folder still has another
   * pg_hba.conf (a fresh initdb, or a folder from before passwords), then pg_hba.conf rewritten to {@link #HBA}.
   */
  private static void secure(Path pgData, Path binaries, String password, boolean newPassword) throws IOException {
    Files.setPosixFilePermissions(pgData, OWNER_RWX);
    Path hba = pgData.resolve("pg_hba.conf");
    boolean current = Files.exists(hba) && Files.readString(hba).equals(HBA);
    if (newPassword || !current) {
      setPassword(pgData, postgresBinary(binaries), password);
      log.info("embedded PostgreSQL in {}: superuser password set, pg_hba.conf now requires it", pgData);
    }
    if (!current) {
      Path tmp = pgData.resolve("pg_hba.conf.tmp");
      Files.deleteIfExists(tmp);
      Files.createFile(tmp, PosixFilePermissions.asFileAttribute(OWNER_RW));
      Files.writeString(tmp, HBA);
      Files.move(tmp, hba, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
  }

  /** The server binary zonky unpacked under {@code binaries} (the newest unpacking, should there be several). */
  private static Path postgresBinary(Path binaries) throws IOException {
    try (var dirs = Files.list(binaries)) {
      return dirs.filter(d -> Files.exists(d.resolve(".exists")) && Files.isExecutable(d.resolve("bin/postgres")))
          .max(Comparator.comparingLong(d -> d.resolve(".exists").toFile().lastModified()))
          .map(d -> d.resolve("bin/postgres"))
          .orElseThrow(() -> new IOException("no PostgreSQL binaries under " + binaries));
    }
  }

  /**
   * Sets the superuser's password through a single-user backend (no network at all, the server is down), hashed as
   * SCRAM-SHA-256. The password goes in on stdin, never on a command line.
   */
  private static void setPassword(Path pgData, Path postgresBin, String password) throws IOException {
    List<String> cmd = new ArrayList<>();
    if (LinuxUtils.isUnshareAvailable()) cmd.addAll(List.of("unshare", "-U"));
    cmd.addAll(List.of(postgresBin.toString(), "--single", "-D", pgData.toString(),
        "-c", "password_encryption=scram-sha-256", "-c", "log_statement=none", SUPERUSER));
    Path out = Files.createTempFile("queen-pg-single", ".log");
    try {
      var p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
      try (OutputStream in = p.getOutputStream()) {
        // no bind parameters in single-user mode; the password is letters and digits only (generated so, and checked
        // by readPassword), so it cannot leave the quotes
        in.write(("ALTER ROLE " + SUPERUSER + " WITH PASSWORD '" + password + "';\n")
            .getBytes(StandardCharsets.US_ASCII));
      }
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException("single-user PostgreSQL did not finish setting the password within 120 s");
      }
      String output = Files.readString(out).replace(password, "********");
      if (p.exitValue() != 0 || output.contains("ERROR:") || output.contains("FATAL:")) {
        throw new IOException("single-user PostgreSQL could not set the password (exit " + p.exitValue() + "):\n"
            + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while setting the embedded PostgreSQL password", e);
    } finally {
      Files.deleteIfExists(out);
    }
  }

  /** The watchdog process for the postmaster now named in {@code pgData/postmaster.pid}. */
  private static Process startWatchdog(Path pgData) throws IOException {
    String pid = Files.readAllLines(pgData.resolve("postmaster.pid")).get(0).trim();
    Long.parseLong(pid);
    return new ProcessBuilder("sh", "-c", WATCHDOG_SCRIPT, "queen-pg-watchdog", pgData.toString(), pid)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .redirectError(ProcessBuilder.Redirect.DISCARD)
        .start();
  }

  /**
   * A node killed with SIGKILL before its watchdog could act leaves its PostgreSQL running on the data folder, which
   * then refuses a second postmaster. Stop the orphan (fast shutdown; it has no clients left) before starting again;
   * its committed data is safe, which is what lets a client that got {@code queued} find its message after the crash.
   * Called only with the folder's {@link DataFolderLock} held, so no live node owns that server; and only a live
   * process whose command line is a postgres on {@code pgData} is stopped (not one that took over a stale pid).
   */
  private static void stopOrphan(Path pgData) throws IOException {
    Path pidFile = pgData.resolve("postmaster.pid");
    if (!Files.exists(pidFile)) return;
    long pid;
    try {
      pid = Long.parseLong(Files.readAllLines(pidFile).get(0).trim());
    } catch (RuntimeException e) {
      return;
    }
    var handle = ProcessHandle.of(pid);
    if (handle.isEmpty() || !handle.get().isAlive()) return;
    String cmd = handle.get().info().commandLine().orElse("");
    if (!cmd.contains("postgres") || !cmd.contains(pgData.toString())) return;
    log.warn("stopping orphaned embedded PostgreSQL (pid {}) left by a previous node", pid);
    try {
      new ProcessBuilder("kill", "-INT", Long.toString(pid)).inheritIO().start().waitFor();
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (handle.get().isAlive() && System.nanoTime() < deadline) Thread.sleep(100);
      if (handle.get().isAlive()) handle.get().destroyForcibly();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void deleteTree(Path p) throws IOException {
    try (var walk = Files.walk(p)) {
      for (Path x : walk.sorted(Comparator.reverseOrder()).toList()) Files.deleteIfExists(x);
    }
  }
}
