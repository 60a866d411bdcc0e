package io.queenvertx.cli;

import java.io.PrintWriter;

/**
 * A redrive's progress on standard error: a bar redrawn in place on a terminal ({@code bar}), one line per change
 * otherwise ({@code lines}), or nothing ({@code none}). The total is what the caller expects to move (the queue's
 * dead letters when the task started, capped by its limit); unknown, the bar shows counts only.
 */
final class Progress {
  static final int WIDTH = 30;

  private final PrintWriter err;
  private final String mode;
  private final long total;
  private String last;
  private long lastDone = -1;
  private long lastAt;
  private double rate;

  Progress(PrintWriter err, String mode, long total) {
    this.err = err;
    this.mode = mode;
    this.total = total;
  }

  /** Shows the task's state; {@code now} in ms. */
  void update(Object task, long now) {
    long done = done(task);
    if (lastDone >= 0 && now > lastAt && done > lastDone) rate = (done - lastDone) * 1000.0 / (now - lastAt);
    if (done != lastDone) {
      lastDone = done;
      lastAt = now;
    }
    String status = Json.string(task, "status");
    String line = render(task, !"running".equals(status));
    if (mode.equals("bar")) {
      err.print("\r" + line);
      if (!"running".equals(status)) err.println();
      err.flush();
    } else if (mode.equals("lines") && !line.equals(last)) {
      err.println(line);
      err.flush();
    }
    last = line;
  }

  static long done(Object t) {
    return Json.number(t, "moved") + Json.number(t, "duplicate") + Json.number(t, "gone") + Json.number(t, "failed");
  }

  String render(Object t, boolean finished) {
    long done = done(t);
    long of = total > 0 ? Math.max(total, done) : 0;
    StringBuilder b = new StringBuilder();
    if (of > 0 || finished) {
      double f = finished ? 1.0 : (double) done / of;
      int fill = (int) Math.round(f * WIDTH);
      b.append('[').append("#".repeat(fill)).append("-".repeat(WIDTH - fill)).append("] ");
      b.append(String.format("%3d%%", Math.round(f * 100))).append("  ");
      b.append(done).append(of > 0 ? "/" + of : "").append("  ");
    } else {
      b.append(done).append(" done  ");
    }
    b.append(Json.string(t, "status")).append("  moved ").append(Json.number(t, "moved"))
        .append("  duplicate ").append(Json.number(t, "duplicate")).append("  gone ").append(Json.number(t, "gone"))
        .append("  failed ").append(Json.number(t, "failed"));
    if (!finished && rate > 0) b.append(String.format("  %.0f/s", rate));
    if (Json.get(t, "lastError") != null) b.append("  last error: ").append(Json.string(t, "lastError"));
    return b.toString();
  }
}
