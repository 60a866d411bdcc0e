package io.queenvertx.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
/** CPU of the broker, of PostgreSQL and of the machine over the measured window ({@code /proc}), for every mode. */
abstract class Measured extends BenchBase {
  Measured(Opts o) {
    super(o);
  }

  // ---------------------------------------------------------------- CPU and PostgreSQL

  static final long CLK_TCK = clkTck();

  static long clkTck() {
    try {
      Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes()).trim();
      p.waitFor(5, TimeUnit.SECONDS);
      return Long.parseLong(out);
    } catch (Exception e) {
      return 100;
    }
  }

  /** Fields after the "(comm)" of /proc/pid/stat (index 0 is field 3), or null if the process is gone. */
  static String[] statFields(int pid) {
    try {
      return CpuAccount.statFields(Files.readString(Path.of("/proc/" + pid + "/stat")));
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  static String comm(int pid) {
    try {
      return Files.readString(Path.of("/proc/" + pid + "/comm")).trim();
    } catch (IOException e) {
      return "";
    }
  }

  /**
   * /proc now: the broker, the postmaster (its own and its reaped children's CPU) and its live children, and this
   * generator. Without a postmaster, every process named postgres counts as a child (best effort: the CPU of the
   * backends that exit during the window is then lost).
   */
  CpuAccount.ProcSnap procSnap() {
    long broker = -1;
    if (o.brokerPid > 0) {
      String[] f = statFields(o.brokerPid);
      if (f != null) broker = CpuAccount.ownTicks(f);
    }
    long pmOwn = -1;
    long pmReaped = 0;
    if (postmasterPid > 0) {
      String[] f = statFields(postmasterPid);
      if (f != null) {
        pmOwn = CpuAccount.ownTicks(f);
        pmReaped = CpuAccount.reapedTicks(f);
      }
    }
    Map<Integer, Long> children = new HashMap<>();
    java.io.File[] procs = new java.io.File("/proc").listFiles();
    for (java.io.File d : procs == null ? new java.io.File[0] : procs) {
      String n = d.getName();
      if (n.isEmpty() || !Character.isDigit(n.charAt(0))) continue;
      try {
        int pid = Integer.parseInt(n);
        if (pid == postmasterPid) continue;
        String[] f = statFields(pid);
        if (f == null) continue;
        if (postmasterPid > 0 ? CpuAccount.ppid(f) == postmasterPid : comm(pid).startsWith("postgres")) {
          children.put(pid, CpuAccount.ownTicks(f));
        }
      } catch (RuntimeException ignored) {
        // raced with an exit
      }
    }
    if (postmasterPid <= 0) pmOwn = 0; // best effort: the sum of the processes named postgres
    String[] self = statFields((int) ProcessHandle.current().pid());
    return new CpuAccount.ProcSnap(broker, postmasterPid > 0 ? postmasterPid : 0, pmOwn, pmReaped, children,
        self == null ? -1 : CpuAccount.ownTicks(self), jitThreads(o.brokerPid));
  }

  /** The broker's JIT compiler threads now: tid to ticks. */
  static Map<Integer, Long> jitThreads(int pid) {
    Map<Integer, Long> m = new HashMap<>();
    java.io.File[] tasks = pid > 0 ? new java.io.File("/proc/" + pid + "/task").listFiles() : null;
    for (java.io.File t : tasks == null ? new java.io.File[0] : tasks) {
      try {
        if (!CpuAccount.isJitThread(Files.readString(t.toPath().resolve("comm")).trim())) continue;
        m.put(Integer.parseInt(t.getName()),
            CpuAccount.ownTicks(CpuAccount.statFields(Files.readString(t.toPath().resolve("stat")))));
      } catch (IOException | RuntimeException ignored) {
        // the thread ended meanwhile
      }
    }
    return m;
  }

  Connection pgConn;
  int postmasterPid;
  /** Idle CPU measured by {@link #measureIdle} (ticks per second; -1: not measured). */
  double idleBrokerTps = -1;
  double idlePgTps = -1;

  /** The broker's and PostgreSQL's CPU while nothing is sent, over {@code secs} seconds. */
  void measureIdle(int secs) {
    Snapshot i0 = snapshot();
    napUntil(i0.nanos + TimeUnit.SECONDS.toNanos(secs));
    Snapshot i1 = snapshot();
    CpuAccount.Window w = CpuAccount.window(i0.proc, i1.proc);
    double s = (i1.nanos - i0.nanos) / 1e9;
    idleBrokerTps = w.brokerTicks() < 0 ? -1 : w.brokerTicks() / s;
    idlePgTps = w.pgTicks() < 0 ? -1 : w.pgTicks() / s;
    log(String.format(Locale.ROOT, "idle: broker %.1f %%, PostgreSQL %.1f %% of a core", 100 * idleBrokerTps / CLK_TCK,
        100 * idlePgTps / CLK_TCK));
  }

  static void napUntil(long nanos) {
    long ms = (nanos - System.nanoTime()) / 1_000_000;
    if (ms <= 0) return;
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  void openPg() {
    if (o.pg == null) return;
    try {
      pgConn = DriverManager.getConnection(o.pg, o.pgUser, o.pgPassword);
      pgConn.setAutoCommit(true);
      if (o.pgPostmasterPid > 0) postmasterPid = o.pgPostmasterPid;
      else postmasterPid = findPostmaster();
      if (postmasterPid <= 0) log("PostgreSQL's postmaster is not visible in /proc: PostgreSQL CPU is a best effort");
    } catch (Exception e) {
      log("cannot read PostgreSQL statistics from " + o.pg + ": " + e);
      pgConn = null;
    }
  }

  /**
   * The postmaster: the parent of this connection's backend ({@code pg_backend_pid()}), else the first line of the
   * data directory's postmaster.pid (when PostgreSQL runs on this machine and its directory is readable); 0 if neither
   * is a process named postgres here (PostgreSQL on another machine or in another pid namespace).
   */
  int findPostmaster() throws java.sql.SQLException {
    try (Statement st = pgConn.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
      rs.next();
      int backend = rs.getInt(1);
      String[] f = statFields(backend);
      if (f != null && comm(backend).startsWith("postgres") && comm(CpuAccount.ppid(f)).startsWith("postgres")) {
        return CpuAccount.ppid(f);
      }
    }
    try (Statement st = pgConn.createStatement(); ResultSet rs = st.executeQuery("SHOW data_directory")) {
      rs.next();
      String first = Files.readAllLines(Path.of(rs.getString(1), "postmaster.pid")).get(0).trim();
      int pid = Integer.parseInt(first);
      if (comm(pid).startsWith("postgres")) return pid;
    } catch (IOException | RuntimeException | java.sql.SQLException e) {
      log("postmaster.pid not readable: " + e.getMessage());
    }
    return 0;
  }

  static final class Snapshot {
    long nanos;
    CpuAccount.ProcSnap proc;
    long commits = -1;
    long nextXid = -1;
    long machineBusy = -1;
    String loadavg = "";
  }

  /** Busy ticks of the whole machine (all cores) from the first line of /proc/stat. */
  static long machineBusyTicks() {
    try {
      String line = Files.readAllLines(Path.of("/proc/stat")).get(0);
      String[] f = line.trim().split("\\s+");
      long busy = 0;
      for (int i : new int[] {1, 2, 3, 6, 7, 8}) busy += Long.parseLong(f[i]);
      return busy;
    } catch (IOException | RuntimeException e) {
      return -1;
    }
  }

  static String loadavg() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  Snapshot snapshot() {
    Snapshot s = new Snapshot();
    s.nanos = System.nanoTime();
    s.proc = procSnap();
    s.machineBusy = machineBusyTicks();
    s.loadavg = loadavg();
    if (pgConn != null) {
      try (Statement st = pgConn.createStatement();
          ResultSet rs = st.executeQuery("SELECT (SELECT sum(xact_commit) FROM pg_stat_database)::bigint,"
              + " pg_snapshot_xmax(pg_current_snapshot())::text::bigint")) {
        rs.next();
        s.commits = rs.getLong(1);
        s.nextXid = rs.getLong(2);
      } catch (Exception e) {
        log("pg_stat_database read failed: " + e);
      }
    }
    return s;
  }

  void putResources(JsonObject j, Snapshot s0, Snapshot s1, long deliveredMsgs) {
    double secs = (s1.nanos - s0.nanos) / 1e9;
    j.put("cores", Runtime.getRuntime().availableProcessors());
    CpuAccount.Window w = CpuAccount.window(s0.proc, s1.proc);
    if (w.brokerTicks() >= 0) j.put("broker_cpu_pct", pct(w.brokerTicks(), secs));
    if (w.pgTicks() >= 0) j.put("pg_cpu_pct", pct(w.pgTicks(), secs));
    j.put("pg_cpu_scope", postmasterPid > 0 ? "postmaster " + postmasterPid + ", its live and its reaped children"
        : "every process named postgres (best effort: backends that exit are lost)");
    if (w.benchTicks() >= 0) j.put("bench_cpu_pct", pct(w.benchTicks(), secs));
    // CPU microseconds per delivered message: what a user pays for, steady on a shared machine where msg/s is not
    JsonObject us = new JsonObject();
    double broker = CpuAccount.Window.usPerMsg(w.brokerTicks(), CLK_TCK, deliveredMsgs);
    double pg = CpuAccount.Window.usPerMsg(w.pgTicks(), CLK_TCK, deliveredMsgs);
    if (!Double.isNaN(broker)) us.put("broker", round2(broker));
    if (!Double.isNaN(pg)) us.put("pg", round2(pg));
    if (!Double.isNaN(broker) && !Double.isNaN(pg)) us.put("total", round2(broker + pg));
    double bench = CpuAccount.Window.usPerMsg(w.benchTicks(), CLK_TCK, deliveredMsgs);
    if (!Double.isNaN(bench)) us.put("bench", round2(bench));
    // the broker's JIT compiler threads (a lower bound): large on a starved machine, where the JVM is still compiling
    double jit = CpuAccount.Window.usPerMsg(w.brokerJitTicks(), CLK_TCK, deliveredMsgs);
    if (!Double.isNaN(jit) && o.brokerPid > 0) us.put("broker_jit", round2(jit));
    j.put("cpu_us_per_msg", us);
    if (idleBrokerTps >= 0 && idlePgTps >= 0 && w.brokerTicks() >= 0 && w.pgTicks() >= 0) {
      // what the load added: the window's CPU minus what the processes spend idle over as long a time
      j.put("idle_cpu_pct", new JsonObject().put("broker", round2(100 * idleBrokerTps / CLK_TCK))
          .put("pg", round2(100 * idlePgTps / CLK_TCK)));
      double nb = CpuAccount.Window.netUsPerMsg(w.brokerTicks(), idleBrokerTps, secs, CLK_TCK, deliveredMsgs);
      double np = CpuAccount.Window.netUsPerMsg(w.pgTicks(), idlePgTps, secs, CLK_TCK, deliveredMsgs);
      if (!Double.isNaN(nb) && !Double.isNaN(np)) {
        j.put("cpu_us_per_msg_net", new JsonObject().put("broker", round2(nb)).put("pg", round2(np))
            .put("total", round2(nb + np)));
      }
    }
    if (s0.machineBusy >= 0 && s1.machineBusy >= 0) {
      double machine = 100.0 * (s1.machineBusy - s0.machineBusy) / CLK_TCK / secs;
      j.put("machine_cpu_pct", round2(machine));
      // whatever else ran on the machine meanwhile (other jobs): machine - broker - postgres - bench
      double other = machine - j.getDouble("pg_cpu_pct", 0.0) - j.getDouble("broker_cpu_pct", 0.0)
          - j.getDouble("bench_cpu_pct", 0.0);
      j.put("other_cpu_pct", round2(Math.max(0, other)));
    }
    j.put("loadavg_start", s0.loadavg).put("loadavg_end", s1.loadavg);
    if (s0.commits >= 0 && s1.commits >= 0) {
      long c = s1.commits - s0.commits;
      j.put("pg_xact_commits", c);
      j.put("commits_per_msg", deliveredMsgs > 0 ? Math.round(1e4 * c / deliveredMsgs) / 1e4 : null);
      long x = s1.nextXid - s0.nextXid;
      j.put("pg_write_xids", x);
      j.put("write_xids_per_msg", deliveredMsgs > 0 ? Math.round(1e4 * x / deliveredMsgs) / 1e4 : null);
    }
  }

  static double pct(long ticks, double secs) {
    return round2(100.0 * ticks / CLK_TCK / secs);
  }
}
