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

  /** Fields after the "(comm)" of /proc/pid/stat; index 0 is field 3 (state). */
  static String[] statFields(int pid) {
    try {
      String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return s.substring(s.lastIndexOf(')') + 2).split(" ");
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  static long ticks(String[] f, boolean withChildren) {
    long t = Long.parseLong(f[11]) + Long.parseLong(f[12]);
    if (withChildren) t += Long.parseLong(f[13]) + Long.parseLong(f[14]);
    return t;
  }

  static String comm(int pid) {
    try {
      return Files.readString(Path.of("/proc/" + pid + "/comm")).trim();
    } catch (IOException e) {
      return "";
    }
  }

  /** PostgreSQL processes: the postmaster (with reaped children) and its live children, or every "postgres". */
  Map<Integer, Long> pgTicks(int postmaster) {
    Map<Integer, Long> m = new HashMap<>();
    java.io.File[] procs = new java.io.File("/proc").listFiles();
    if (procs == null) return m;
    for (java.io.File d : procs) {
      String n = d.getName();
      if (n.isEmpty() || !Character.isDigit(n.charAt(0))) continue;
      int pid;
      try {
        pid = Integer.parseInt(n);
      } catch (NumberFormatException e) {
        continue;
      }
      String[] f = statFields(pid);
      if (f == null) continue;
      try {
        if (postmaster > 0) {
          if (pid == postmaster) m.put(pid, ticks(f, true));
          else if (Integer.parseInt(f[1]) == postmaster) m.put(pid, ticks(f, false));
        } else if (comm(pid).startsWith("postgres")) {
          m.put(pid, ticks(f, false));
        }
      } catch (RuntimeException ignored) {
        // raced with exit
      }
    }
    return m;
  }

  Connection pgConn;
  int postmasterPid;

  void openPg() {
    if (o.pg == null) return;
    try {
      pgConn = DriverManager.getConnection(o.pg, o.pgUser, o.pgPassword);
      pgConn.setAutoCommit(true);
      try (Statement st = pgConn.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
        rs.next();
        int backend = rs.getInt(1);
        String[] f = statFields(backend);
        if (f != null) postmasterPid = Integer.parseInt(f[1]);
      }
    } catch (Exception e) {
      log("cannot read PostgreSQL statistics from " + o.pg + ": " + e);
      pgConn = null;
    }
  }

  static final class Snapshot {
    long nanos;
    long brokerTicks = -1;
    Map<Integer, Long> pg;
    long commits = -1;
    long nextXid = -1;
    long selfTicks = -1;
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
    if (o.brokerPid > 0) {
      String[] f = statFields(o.brokerPid);
      if (f != null) s.brokerTicks = ticks(f, false);
    }
    s.pg = pgTicks(postmasterPid);
    String[] self = statFields((int) ProcessHandle.current().pid());
    if (self != null) s.selfTicks = ticks(self, false);
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
    if (s0.brokerTicks >= 0 && s1.brokerTicks >= 0) {
      j.put("broker_cpu_pct", round2(100.0 * (s1.brokerTicks - s0.brokerTicks) / CLK_TCK / secs));
    }
    long pg = 0;
    for (var e : s1.pg.entrySet()) pg += e.getValue() - s0.pg.getOrDefault(e.getKey(), 0L);
    j.put("pg_cpu_pct", round2(100.0 * pg / CLK_TCK / secs));
    j.put("pg_cpu_scope", postmasterPid > 0 ? "postmaster " + postmasterPid + " and its children"
        : "every process named postgres (best effort)");
    if (s0.selfTicks >= 0 && s1.selfTicks >= 0) {
      j.put("bench_cpu_pct", round2(100.0 * (s1.selfTicks - s0.selfTicks) / CLK_TCK / secs));
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
}
