import java.net.*; import java.io.*; import com.sun.net.httpserver.*;
public class U { public static void main(String[] a) throws Exception {
 HttpServer s = HttpServer.create(new InetSocketAddress("127.0.0.1",0),0);
 s.createContext("/", ex -> { ex.getRequestBody().readAllBytes(); ex.sendResponseHeaders(204,-1); ex.close(); }); s.start();
 URI u = URI.create("http://127.0.0.1:"+s.getAddress().getPort()+"/report/0");
 for (int i=0;i<3;i++){
 long t0=System.nanoTime();
 HttpURLConnection c = (HttpURLConnection) u.toURL().openConnection();
 c.setRequestMethod("POST"); c.setDoOutput(true); c.setConnectTimeout(2000); c.setReadTimeout(5000);
 c.setRequestProperty("Content-Type","application/json"); c.setRequestProperty("Authorization","Bearer x");
 try (OutputStream o=c.getOutputStream()){ o.write("{\"a\":1}".getBytes()); }
 int code=c.getResponseCode(); c.getInputStream().close();
 System.out.println("post ms " + (System.nanoTime()-t0)/1e6 + " " + code);}
 s.stop(0);
}}
