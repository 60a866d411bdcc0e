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
/** The command line of {@link Bench}: every option and its default, {@link #usage}, {@link #parse}. */
final class Opts {
  String mode = "push";
  String url = "http://127.0.0.1:6632";
  String url2 = null;
  int clients = 8;
  int producers = -1; // -1 = same as clients (popack, fanout)
  int batch = 100;
  int partitions = 10;
  int payloadBytes = 200;
  int duration = 60;
  int warmup = 5;
  int groups = 10;
  int consumersPerGroup = 1;
  int trials = 200;
  int popTimeoutMs = 1000;
  int popPartitions = 1;
  long prefill = 0;
  int prefillBatch = 100;
  int fillClients = 16;
  long deadLetters = 100_000;
  long fill = 10_000_000;
  int redriveTimeout = 300;
  String deadLetterVia = "sql";
  int maxOffset = 5000;
  String partitionPick = "item"; // item | request
  int parkMs = 100;
  String queue = null;
  String pg = null;
  String pgUser = "postgres";
  String pgPassword = "postgres";
  int pgPostmasterPid = 0;
  int idle = 0;
  int brokerPid = 0;
  int eventLoops = 0;
  String label = null;
  double reference = 0;

  static String usage() {
    return String.join("\n",
        "usage: java -jar queen-bench.jar --mode push|popack|fanout|wakeup|redrive|msgpage [options]",
        "  --url URL               broker (node A for wakeup)           default http://127.0.0.1:6632",
        "  --url2 URL              node B for wakeup (push goes there)  default = --url",
        "  --clients N             concurrent loops (pushers in push, consumers in popack/fanout total)  default 8",
        "  --producers N           concurrent pushers in popack/fanout  default = --clients",
        "  --batch N               items per push / pop batch           default 100",
        "  --partitions N          partitions p-0..p-(N-1) of the queue default 10",
        "  --partition-pick item|request  round-robin per item (default) or one partition per request",
        "  --payload-bytes N       approximate JSON payload size        default 200",
        "  --duration S            measured seconds                     default 60",
        "  --warmup S              unmeasured seconds before            default 5",
        "  --groups K              fanout consumer groups g-0..g-(K-1)  default 10",
        "  --consumers-per-group N fanout consumers per group           default 1",
        "  --prefill N             popack: push N messages before starting consumers  default 0",
        "  --prefill-batch N       items per push while prefilling/filling  default 100",
        "  --fill-clients N        pushers while prefilling/filling     default 16",
        "  --dead-letters N        redrive: dead letters to make, then redrive in bulk  default 100000",
        "  --dead-letter-via sql|api  redrive setup: insert the rows (default) or pop+ack dlq each (slow)",
        "  --redrive-timeout S     redrive: give up (and cancel the task) after S seconds  default 300",
        "  --fill N                msgpage: messages in the queue before paging  default 10000000",
        "  --max-offset N          msgpage: largest random offset of an offset page  default 5000",
        "  --pop-timeout MS        long-poll timeout of pops            default 1000",
        "  --pop-partitions N      pop 'partitions' parameter           default 1",
        "  --trials T              wakeup trials                        default 200",
        "  --park-ms MS            wakeup: wait this long (+0..50 ms jitter) after sending the pop before pushing  default 100",
        "  --queue NAME            queue name                           default bench-<mode>-<random>",
        "  --pg JDBC_URL           read pg_stat_database.xact_commit before/after (e.g. jdbc:postgresql://127.0.0.1:5432/postgres)",
        "  --pg-user U --pg-password P                                  default postgres/postgres",
        "  --pg-postmaster-pid PID PostgreSQL's postmaster (default: the parent of the --pg connection's backend,",
        "                          else the data directory's postmaster.pid)",
        "  --broker-pid PID        sample broker CPU from /proc/PID/stat",
        "  --idle S                before the loops start, measure S seconds of the broker's and PostgreSQL's idle CPU",
        "                          (timers, flushers, background workers): adds idle_cpu_pct and cpu_us_per_msg_net",
        "  --event-loops N         bench event loops                    default 2*cores",
        "  --label TEXT            free text copied into the JSON line",
        "  --reference X           the reference broker's figure for this row (msg/s): adds reference and ratio");
  }

  static Opts parse(String[] args) {
    Opts o = new Opts();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("-h") || a.equals("--help")) {
        System.err.println(usage());
        System.exit(0);
      }
      String v;
      int eq = a.indexOf('=');
      if (a.startsWith("--") && eq > 0) {
        v = a.substring(eq + 1);
        a = a.substring(0, eq);
      } else {
        if (i + 1 >= args.length) BenchBase.die("missing value for " + a);
        v = args[++i];
      }
      switch (a) {
        case "--mode" -> o.mode = v;
        case "--url" -> o.url = v;
        case "--url2" -> o.url2 = v;
        case "--clients" -> o.clients = Integer.parseInt(v);
        case "--producers" -> o.producers = Integer.parseInt(v);
        case "--batch" -> o.batch = Integer.parseInt(v);
        case "--partitions" -> o.partitions = Integer.parseInt(v);
        case "--partition-pick" -> o.partitionPick = v;
        case "--payload-bytes" -> o.payloadBytes = Integer.parseInt(v);
        case "--duration" -> o.duration = Integer.parseInt(v);
        case "--warmup" -> o.warmup = Integer.parseInt(v);
        case "--groups" -> o.groups = Integer.parseInt(v);
        case "--consumers-per-group" -> o.consumersPerGroup = Integer.parseInt(v);
        case "--prefill" -> o.prefill = Long.parseLong(v);
        case "--prefill-batch" -> o.prefillBatch = Integer.parseInt(v);
        case "--fill-clients" -> o.fillClients = Integer.parseInt(v);
        case "--dead-letters" -> o.deadLetters = Long.parseLong(v);
        case "--redrive-timeout" -> o.redriveTimeout = Integer.parseInt(v);
        case "--dead-letter-via" -> o.deadLetterVia = v;
        case "--fill" -> o.fill = Long.parseLong(v);
        case "--max-offset" -> o.maxOffset = Integer.parseInt(v);
        case "--pop-timeout" -> o.popTimeoutMs = Integer.parseInt(v);
        case "--pop-partitions" -> o.popPartitions = Integer.parseInt(v);
        case "--trials" -> o.trials = Integer.parseInt(v);
        case "--park-ms" -> o.parkMs = Integer.parseInt(v);
        case "--queue" -> o.queue = v;
        case "--pg" -> o.pg = v;
        case "--pg-user" -> o.pgUser = v;
        case "--pg-password" -> o.pgPassword = v;
        case "--pg-postmaster-pid" -> o.pgPostmasterPid = Integer.parseInt(v);
        case "--idle" -> o.idle = Integer.parseInt(v);
        case "--broker-pid" -> o.brokerPid = Integer.parseInt(v);
        case "--event-loops" -> o.eventLoops = Integer.parseInt(v);
        case "--label" -> o.label = v;
        case "--reference" -> o.reference = Double.parseDouble(v);
        default -> BenchBase.die("unknown option " + a + "\n" + usage());
      }
    }
    if (!List.of("push", "popack", "fanout", "wakeup", "redrive", "msgpage").contains(o.mode)) {
      BenchBase.die("unknown mode " + o.mode);
    }
    if (!List.of("item", "request").contains(o.partitionPick)) BenchBase.die("--partition-pick must be item or request");
    if (!List.of("sql", "api").contains(o.deadLetterVia)) BenchBase.die("--dead-letter-via must be sql or api");
    if (o.clients < 1 || o.batch < 1 || o.partitions < 1 || o.duration < 1 || o.warmup < 0) BenchBase.die("bad numbers");
    if (o.producers < 0) o.producers = o.clients;
    if (o.url2 == null) o.url2 = o.url;
    if (o.mode.equals("wakeup")) o.partitions = 1;
    return o;
  }
}
