package io.queenvertx.consumer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Parked long polls by wake gate: one gate per (tenant, queue), and one "any" gate per tenant for discovery pops
 * (ENGINE.md §11). Gates exist only while a pop is parked on them; a landing with no gate costs nothing. Used only
 * from the consumer verticle's event loop.
 */
final class LongPollGates<W> {
  private final Map<String, Set<W>> gates = new HashMap<>();

  static String queueGate(String tenant, String queue) {
    return tenant + '\u001f' + queue;
  }

  static String anyGate(String tenant) {
    return tenant + "\u001f*";
  }

  void park(String gate, W waiter) {
    gates.computeIfAbsent(gate, k -> new LinkedHashSet<>()).add(waiter);
  }

  void unpark(String gate, W waiter) {
    Set<W> s = gates.get(gate);
    if (s == null) return;
    s.remove(waiter);
    if (s.isEmpty()) gates.remove(gate);
  }

  /** Removes and returns every waiter parked on the gate. */
  List<W> drain(String gate) {
    Set<W> s = gates.remove(gate);
    return s == null ? List.of() : new ArrayList<>(s);
  }

  /** Parked polls per gate (a copy). */
  java.util.Map<String, Integer> sizes() {
    Map<String, Integer> out = new HashMap<>();
    gates.forEach((gate, s) -> out.put(gate, s.size()));
    return out;
  }

  int parked() {
    int n = 0;
    for (Set<W> s : gates.values()) n += s.size();
    return n;
  }
}
