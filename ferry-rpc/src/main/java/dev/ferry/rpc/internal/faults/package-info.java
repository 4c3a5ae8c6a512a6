/**
 * Fault injection ({@link dev.ferry.rpc.FaultInjection}): a decorator around an agent's transport
 * that fails, delays or cuts off the messages the options name, before the transport chooses their
 * route. Used only when the options ask for faults. Not public API: the classes here may change in
 * any release.
 */
package dev.ferry.rpc.internal.faults;
