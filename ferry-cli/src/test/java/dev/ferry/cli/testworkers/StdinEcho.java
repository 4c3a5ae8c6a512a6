package dev.ferry.cli.testworkers;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/** Test worker: answers every stdin line with {@code RANK:line} on stdout; exits 0 at end of input. */
public final class StdinEcho {

  public static void main(String[] args) throws IOException {
    String rank = System.getenv("RANK");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      System.out.println(rank + ":" + line);
      System.out.flush();
    }
  }
}
