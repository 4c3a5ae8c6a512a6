module com.example.peek {
    requires dev.ferry.rpc;
}
