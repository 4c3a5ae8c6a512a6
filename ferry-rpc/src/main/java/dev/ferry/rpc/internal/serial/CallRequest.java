package dev.ferry.rpc.internal.serial;

/** The payload of a call: the function and its arguments. */
public record CallRequest(FunctionRef function, Object[] args) {
}
