package io.queenvertx.bus;

import io.vertx.core.json.JsonObject;

/** A reply that is already an HTTP answer: the status and the contract's body. */
public record Verdict(int status, JsonObject body) {}
