using System.Net;
using System.Net.Sockets;
using System.Text;
using Npgsql;

namespace BlockDb.Tests.PostgreSql;

/// <summary>
/// A gathered batch that committed on the server but whose response never reached the lane (the connection cut after
/// the commit): the select-xor-insert it carried created its block, so it must not be answered "found" by a resend
/// (a caller uploads only the blocks it is told it created).
/// </summary>
public sealed class PostgreSqlLostResponseTests : PostgreSqlSchemaTestBase
{
    [PostgresFact]
    public async Task A_select_xor_insert_whose_committed_batch_lost_its_response_is_not_answered_found()
    {
        var server = new NpgsqlConnectionStringBuilder(ConnectionString);
        using var proxy = new CuttingProxy(server.Host!, server.Port);
        var viaProxy = new NpgsqlConnectionStringBuilder(ConnectionString) { Host = "127.0.0.1", Port = proxy.Port, NoResetOnClose = true, ApplicationName = "lost-" + Guid.NewGuid().ToString("N") }.ConnectionString;
        await using var db = Open(o => o.GroupCommit.MaxReaders = 1, viaProxy);
        await using var shared = db.OpenSharedSession();
        Assert.True((await shared.SelectXorInsertAsync(TestData.Block(1, 10))).Created);

        proxy.CutAfterNextInsert();
        SelectXorInsertResult result;
        try
        {
            result = await shared.SelectXorInsertAsync(TestData.Block(2, 10));
        }
        catch (BlockDbException e) when (e.SqlState is not null)
        {
            Assert.Equal(1, proxy.Cuts);
            return; // told the outcome is unknown: the caller does not take the block as someone else's
        }

        Assert.Equal(1, proxy.Cuts);
        Assert.True(result.Created, "the block this call's own committed batch created was answered as found: no one uploads it");
    }

    [PostgresFact]
    public Task An_autocommit_session_select_xor_insert_whose_commit_lost_its_response_is_not_answered_found() => AutocommitLostResponseAsync(many: false);

    [PostgresFact]
    public Task An_autocommit_session_span_select_xor_insert_whose_commit_lost_its_response_is_not_answered_found() => AutocommitLostResponseAsync(many: true);

    private async Task AutocommitLostResponseAsync(bool many)
    {
        var server = new NpgsqlConnectionStringBuilder(ConnectionString);
        using var proxy = new CuttingProxy(server.Host!, server.Port);
        var viaProxy = new NpgsqlConnectionStringBuilder(ConnectionString) { Host = "127.0.0.1", Port = proxy.Port, NoResetOnClose = true }.ConnectionString;
        await using var db = Open(o => o.Batching.CommitEvery = 1, viaProxy);
        await using var session = await db.OpenSessionAsync();
        Assert.True((await session.SelectXorInsertAsync(TestData.Block(1, 10))).Created);

        proxy.CutAfterNextInsert();
        var results = new SelectXorInsertResult[2];
        try
        {
            if (many)
            {
                await session.SelectXorInsertManyAsync(new[] { TestData.Block(2, 10), TestData.Block(1, 10) }, results);
            }
            else
            {
                results[0] = await session.SelectXorInsertAsync(TestData.Block(2, 10));
            }
        }
        catch (BlockDbException e) when (e.SqlState is not null)
        {
            Assert.Equal(1, proxy.Cuts);
            return; // told the outcome is unknown
        }

        Assert.Equal(1, proxy.Cuts);
        Assert.True(results[0].Created, "the block this call's own committed statement created was answered as found: no one uploads it");
    }

    /// <summary>A TCP relay that, once armed, cuts the connection whose client sent a block insert at the server's first reply to it (sent after the commit).</summary>
    private sealed class CuttingProxy : IDisposable
    {
        private static readonly byte[] Insert = Encoding.UTF8.GetBytes("INSERT INTO \"Block\"");
        private readonly TcpListener _listener = new(IPAddress.Loopback, 0);
        private readonly string _host;
        private readonly int _port;
        private int _armed;
        private int _cuts;

        public CuttingProxy(string host, int port)
        {
            (_host, _port) = (host, port);
            _listener.Start();
            _ = AcceptAsync();
        }

        public int Port => ((IPEndPoint)_listener.LocalEndpoint).Port;

        public int Cuts => Volatile.Read(ref _cuts);

        public void CutAfterNextInsert() => Volatile.Write(ref _armed, 1);

        public void Dispose() => _listener.Stop();

        private async Task AcceptAsync()
        {
            while (true)
            {
                TcpClient client;
                try
                {
                    client = await _listener.AcceptTcpClientAsync();
                }
                catch (Exception)
                {
                    return;
                }

                _ = RelayAsync(client);
            }
        }

        private async Task RelayAsync(TcpClient client)
        {
            using var _ = client;
            using var upstream = new TcpClient();
            await upstream.ConnectAsync(_host, _port);
            var doomed = 0;
            var toServer = Pump(client.GetStream(), upstream.GetStream(), chunk =>
            {
                if (chunk.AsSpan().IndexOf(Insert) >= 0 && Interlocked.Exchange(ref _armed, 0) == 1)
                {
                    Volatile.Write(ref doomed, 1);
                }

                return true;
            });
            var toClient = Pump(upstream.GetStream(), client.GetStream(), _ =>
            {
                if (Volatile.Read(ref doomed) == 1)
                {
                    Interlocked.Increment(ref _cuts);
                    return false;
                }

                return true;
            });
            await Task.WhenAny(toServer, toClient);
            client.Close();
            upstream.Close();
        }

        private static async Task Pump(Stream from, Stream to, Func<byte[], bool> forward)
        {
            var buffer = new byte[65536];
            try
            {
                int read;
                while ((read = await from.ReadAsync(buffer)) > 0)
                {
                    if (!forward(buffer[..read]))
                    {
                        return;
                    }

                    await to.WriteAsync(buffer.AsMemory(0, read));
                }
            }
            catch (Exception)
            {
                // Either side closed.
            }
        }
    }
}
