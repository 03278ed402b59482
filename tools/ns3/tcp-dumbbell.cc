// tcp-dumbbell: the ns-3 side of strata's simulator fidelity test.
//
// N TCP bulk flows (NewReno or Cubic) share a point-to-point bottleneck with
// a drop-tail device queue; each sender and receiver hangs off the routers
// by a 100 Mbit/s, 1 ms link. Flows start at uniformly random times in
// [0, jitter). The program prints one JSON object: each flow's goodput in
// bytes, the bottleneck's utilisation (both after a warm-up) and the wall
// time of Simulator::Run.
//
// Build with tools/ns3/build.sh; the Go test internal/lab runs it.

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

using namespace ns3;

static uint64_t g_bottleneckBytes = 0;
static double g_warmup = 0;
static double g_stop = 0;
static std::vector<uint64_t> g_atWarmup;

static void
OnBottleneckTx(Ptr<const Packet> p)
{
    double now = Simulator::Now().GetSeconds();
    if (now > g_warmup && now <= g_stop)
    {
        g_bottleneckBytes += p->GetSize();
    }
}

static void
SnapshotSinks(std::vector<Ptr<PacketSink>>* sinks)
{
    for (auto& s : *sinks)
    {
        g_atWarmup.push_back(s->GetTotalRx());
    }
}

int
main(int argc, char* argv[])
{
    uint32_t flows = 6;
    std::string rate = "10Mbps";
    double delayMs = 20; // bottleneck one-way delay
    uint32_t queue = 100;
    std::string tcp = "newreno";
    double duration = 100;
    uint32_t seed = 1;
    double jitter = 1.0;
    uint32_t mss = 1448;
    bool sack = true;
    double warmup = 0;
    std::string recovery = "prr";

    CommandLine cmd;
    cmd.AddValue("flows", "number of TCP flows", flows);
    cmd.AddValue("rate", "bottleneck rate", rate);
    cmd.AddValue("delay", "bottleneck one-way delay in ms", delayMs);
    cmd.AddValue("queue", "bottleneck drop-tail queue in packets", queue);
    cmd.AddValue("tcp", "newreno or cubic", tcp);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.AddValue("seed", "run number for the random start times", seed);
    cmd.AddValue("jitter", "flows start uniformly in [0, jitter) seconds", jitter);
    cmd.AddValue("mss", "TCP segment size in bytes", mss);
    cmd.AddValue("warmup", "seconds excluded from the measurements", warmup);
    cmd.AddValue("recovery", "loss recovery with SACK: prr (ns-3's default) or classic", recovery);
    cmd.AddValue("sack", "SACK with PRR recovery (true) or NewReno recovery without SACK (false)", sack);
    cmd.Parse(argc, argv);
    g_stop = duration;
    g_warmup = warmup;

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);

    std::string socketType = tcp == "cubic" ? "ns3::TcpCubic" : "ns3::TcpNewReno";
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(socketType));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(mss));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(sack));
    if (sack && recovery == "classic")
    {
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TypeId::LookupByName("ns3::TcpClassicRecovery")));
    }
    if (!sack)
    {
        // RFC 6582 NewReno recovery driven by duplicate ACKs alone, as strata's
        // transport runs it with sack: false.
        Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                           TypeIdValue(TypeId::LookupByName("ns3::TcpClassicRecovery")));
        Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(false));
    }
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));

    NodeContainer routers;
    routers.Create(2);
    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);
    InternetStackHelper stack;
    stack.Install(routers);
    stack.Install(senders);
    stack.Install(receivers);

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue(rate));
    bottleneck.SetChannelAttribute("Delay", TimeValue(MilliSeconds(delayMs)));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize",
                        QueueSizeValue(QueueSize(std::to_string(queue) + "p")));
    PointToPointHelper edge;
    edge.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    edge.SetChannelAttribute("Delay", TimeValue(MilliSeconds(1)));
    edge.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize("1000p")));

    Ipv4AddressHelper addr;
    TrafficControlHelper tch;
    NetDeviceContainer core = bottleneck.Install(routers.Get(0), routers.Get(1));
    addr.SetBase("10.0.0.0", "255.255.255.0");
    addr.Assign(core);
    // The device queue is the bottleneck queue: no queue disc in front of it.
    tch.Uninstall(core);

    std::vector<Ipv4Address> dst;
    for (uint32_t i = 0; i < flows; i++)
    {
        NetDeviceContainer a = edge.Install(senders.Get(i), routers.Get(0));
        NetDeviceContainer b = edge.Install(routers.Get(1), receivers.Get(i));
        addr.SetBase(Ipv4Address((10u << 24) | ((1 + 2 * i) << 8)), "255.255.255.0");
        addr.Assign(a);
        addr.SetBase(Ipv4Address((10u << 24) | ((2 + 2 * i) << 8)), "255.255.255.0");
        Ipv4InterfaceContainer ib = addr.Assign(b);
        tch.Uninstall(a);
        tch.Uninstall(b);
        dst.push_back(ib.GetAddress(1));
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    core.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnBottleneckTx));

    Ptr<UniformRandomVariable> start = CreateObject<UniformRandomVariable>();
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < flows; i++)
    {
        uint16_t port = 5000 + i;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer s = sinkHelper.Install(receivers.Get(i));
        s.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(s.Get(0)));
        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(dst[i], port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(mss));
        ApplicationContainer app = src.Install(senders.Get(i));
        app.Start(Seconds(start->GetValue(0, jitter)));
    }

    Simulator::Schedule(Seconds(warmup), &SnapshotSinks, &sinks);
    Simulator::Stop(Seconds(duration));
    auto t0 = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // The PPP header (2 bytes) is part of every transmission, as strata's
    // link overhead of 2 bytes in the same experiment.
    double capacity = DataRate(rate).GetBitRate() * (duration - warmup);
    std::printf("{\"util\": %.6f, \"wall_s\": %.4f, \"goodput_bytes\": [", g_bottleneckBytes * 8.0 / capacity, wall);
    for (uint32_t i = 0; i < flows; i++)
    {
        std::printf("%s%llu", i ? ", " : "", (unsigned long long)(sinks[i]->GetTotalRx() - g_atWarmup[i]));
    }
    std::printf("]}\n");
    Simulator::Destroy();
    return 0;
}
