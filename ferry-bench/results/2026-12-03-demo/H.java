import java.net.http.*; import java.time.Duration;
public class H { public static void main(String[] a) throws Exception {
 long t0=System.nanoTime();
 HttpClient c = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();
 long t1=System.nanoTime();
 System.out.println("build ms " + (t1-t0)/1e6);
 long t2=System.nanoTime(); c.close(); System.out.println("close ms " + (System.nanoTime()-t2)/1e6);
}}
