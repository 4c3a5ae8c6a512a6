package dev.ferry.rpc.internal.agent;

/** The first message on a connection: the group it belongs to and the worker that opened it. */
record Hello(String groupId, String name, int rank) {
}
