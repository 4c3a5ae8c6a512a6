import java.net.*; import java.io.*;
public class V { public static void main(String[] a) throws Exception {
 if (a[0].equals("vt")) { Thread.ofVirtual().start(() -> {}).join(); }
 if (a[0].equals("vtsync")) { Object o = new Object(); Thread t; synchronized (o) { t = Thread.ofVirtual().start(() -> { synchronized (o) {} }); Thread.sleep(50);} t.join(); }
 if (a[0].equals("vtio")) { ServerSocket s = new ServerSocket(0, 0, InetAddress.getLoopbackAddress());
   Thread t = Thread.ofVirtual().start(() -> { try (Socket c = new Socket(InetAddress.getLoopbackAddress(), s.getLocalPort())) { c.getInputStream().read(); } catch (IOException e) {} });
   Socket x = s.accept(); Thread.sleep(50); x.getOutputStream().write(1); t.join(); x.close(); s.close(); }
 System.out.println(System.currentTimeMillis());
}}
