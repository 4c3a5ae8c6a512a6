package dev.ferry.cli.testworkers;

/** Test worker whose main method is its superclass's, which java's launcher finds too. */
public final class InheritedMain extends InstanceMain {}
