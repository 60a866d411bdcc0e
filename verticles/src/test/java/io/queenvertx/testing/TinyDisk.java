package io.queenvertx.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * A real, small file system (a tmpfs of a few hundred KiB) mounted on a fresh folder, so a test meets a genuinely full
 * disk (ENOSPC from the kernel, partial writes included) rather than a mock. Mounting needs root: elsewhere the test
 * is skipped with that reason (CI runs as root, so it runs there). {@link #close()} unmounts and removes the folder.
 */
public final class TinyDisk implements AutoCloseable {
  private final Path dir;

  private TinyDisk(Path dir) {
    this.dir = dir;
  }

  /** Mounts a tmpfs of {@code kib} KiB, or skips the calling test when this JVM cannot mount (not root). */
  public static TinyDisk mount(int kib) throws Exception {
    Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
        "a full disk is a tmpfs mounted by the test: needs root (CI runs as root)");
    Path dir = Files.createTempDirectory("queen-tiny-disk");
    int rc = run("mount", "-t", "tmpfs", "-o", "size=" + kib + "k", "tmpfs", dir.toString());
    if (rc != 0) {
      Files.deleteIfExists(dir);
      Assumptions.abort("mount -t tmpfs failed with " + rc + " (no CAP_SYS_ADMIN in this container?)");
    }
    return new TinyDisk(dir);
  }

  public Path dir() {
    return dir;
  }

  /** Writes a file of {@code kib} KiB named {@code name}: room the test can give back by deleting it. */
  public Path reserve(String name, int kib) throws IOException {
    return Files.write(dir.resolve(name), new byte[kib * 1024]);
  }

  private static int run(String... cmd) throws Exception {
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return -1;
    }
    return p.exitValue();
  }

  @Override
  public void close() throws Exception {
    int rc = run("umount", dir.toString());
    if (rc != 0) rc = run("umount", "-l", dir.toString());
    if (rc != 0) throw new IllegalStateException("umount " + dir + " failed with " + rc);
    Files.deleteIfExists(dir);
  }
}
