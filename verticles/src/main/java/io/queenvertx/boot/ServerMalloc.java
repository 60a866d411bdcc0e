package io.queenvertx.boot;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

/** How the embedded PostgreSQL's processes get their glibc malloc settings ({@link EmbeddedDatabase}). */
final class ServerMalloc {
  private ServerMalloc() {}

  /**
   * glibc settings for the server's processes: keep up to 64 MiB freed at the top of a backend's heap instead of
   * handing it back to the kernel, and grow the heap 16 MiB at a time. With glibc's defaults a backend trims its heap
   * whenever 128 KiB are free at the top, which on the hot path is after nearly every statement (a b-tree scan alone
   * allocates about 27 KiB), and the next statement faults the pages in again: perf of the embedded server under
   * batch-1 pops and acks put about 11 % of its CPU in those page faults, brk and munmap. Memory a backend keeps is
   * at most its own high-water mark; nothing here is shared.
   */
  static final String TUNABLES = "glibc.malloc.trim_threshold=67108864:glibc.malloc.top_pad=16777216";
  private static final String WRAPPER = "#!/bin/sh\n"
      + "# Written by queen-vertx (ServerMalloc): the PostgreSQL server with glibc's malloc tuned; postgres.real is\n"
      + "# the server itself.\n"
      + "GLIBC_TUNABLES=\"${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}" + TUNABLES + "\"\n"
      + "export GLIBC_TUNABLES\n"
      + "exec \"$0.real\" \"$@\"\n";

  /**
   * Puts {@link #WRAPPER} in the place of the server binary zonky runs (the binary becomes
   * {@code postgres.real} beside it), so every server process starts with {@link #TUNABLES}: zonky launches
   * the server with this JVM's environment and offers no way to add to it. Idempotent: a binary already wrapped is
   * left alone, one unpacked again is wrapped again. The binary is copied before the wrapper replaces it, so a crash
   * in between leaves a runnable server (wrapped on the next start).
   */
  static void wrap(Path postgres) throws IOException {
    byte[] head = new byte[2];
    try (InputStream in = Files.newInputStream(postgres)) {
      if (in.readNBytes(head, 0, 2) == 2 && head[0] == '#' && head[1] == '!') return;
    }
    Path real = postgres.resolveSibling(postgres.getFileName() + ".real");
    Path tmp = postgres.resolveSibling(postgres.getFileName() + ".wrapper");
    Files.writeString(tmp, WRAPPER, StandardCharsets.US_ASCII);
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.copy(postgres, real, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.COPY_ATTRIBUTES);
    Files.move(tmp, postgres, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }
}
