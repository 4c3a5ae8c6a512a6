package dev.ferry.cli.testworkers;

import java.util.List;

/** Test worker: prints the launcher's variables, a system property and its arguments, then exits 0. */
public final class EnvEcho {

  public static void main(String[] args) {
    for (String name : List.of("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
        "MASTER_PORT", "FERRY_TEST_EXTRA", "GROUP_RANK", "TORCHELASTIC_RESTART_COUNT",
        "FERRY_STATUS_URL")) {
      System.out.println(name + "=" + System.getenv(name));
    }
    String token = System.getenv("FERRY_AUTH_TOKEN");
    // Which token, not the token: its length and hash, equal on every rank of a group.
    System.out.println("auth=" + (token == null ? "none" : token.length() + "/" + Integer.toHexString(token.hashCode())));
    System.out.println("prop=" + System.getProperty("ferry.test.prop"));
    System.out.println("leakDetection=" + System.getProperty("io.netty.leakDetection.level"));
    System.out.println("args=" + List.of(args));
    System.err.println("stderr of rank " + System.getenv("RANK"));
  }
}
