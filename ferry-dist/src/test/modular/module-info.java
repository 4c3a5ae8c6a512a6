// A program of its own on the module path: it needs Ferry's API module only. Ferry resolves the
// functions it is asked to run, and Fory encodes the values, by reflection: the package is open.
module com.example.modular {
    requires dev.ferry.rpc;

    opens com.example.modular;
}
