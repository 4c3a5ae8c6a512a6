package dev.ferry.rpc;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares code that peers may call on this worker although it lies outside the application's
 * packages ({@link RpcBackendOptions.Builder#applicationPackage}). On a class: its methods and
 * constructors that are not private, and the lambdas and method references written in it; on a
 * method or constructor: that one alone.
 *
 * <pre>{@code
 * package com.example.shared;          // not one of the application's packages
 *
 * @RpcCallable
 * public final class Lookups {
 *     public static String owner(String key) { ... }
 * }
 * }</pre>
 *
 * <p>A worker runs only what its program exposes: the application's packages (which {@code ferry run}
 * names from the main class), classes and methods marked with this annotation, the entry points of
 * libraries built on Ferry ({@link dev.ferry.rpc.spi.TrustedFunctions}) and the packages or classes
 * the options add ({@link RpcBackendOptions.Builder#allowFunctionPrefix}). Private methods are never
 * callable (a lambda is), nor are the JDK's classes or Ferry's own: a peer that names one gets
 * {@link RpcException.Code#UNKNOWN_FUNCTION} with the rule that refused it. Mark only what is made to
 * be called by any member of the group: each marked method is a remote entry point.
 *
 * <p>The mark of a class does not extend to its nested classes, and a mark on a method does not
 * extend to lambdas written in it: mark the nested class, or the class.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD, ElementType.CONSTRUCTOR})
public @interface RpcCallable {
}
