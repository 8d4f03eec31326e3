// The kernel side loaded in a thread while the program already runs (see
// early_tracer.hpp). It wakes the waiting thread with SIGALRM, the signal
// hub's tick, until that thread has seen it done.
#pragma once

#include "ebpf_program.hpp"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

namespace max_rss::ebpf {

class Loader {
public:
    ~Loader() { join(); }
    void start() {
        waiter_ = ::pthread_self();
        thread_ = std::thread([this] { load(); });
    }
    bool done() {
        if (!done_.load(std::memory_order_acquire)) return false;
        see();
        return true;
    }
    void join() {
        see();
        if (thread_.joinable()) thread_.join();
    }
    [[nodiscard]] bool failed() const { return error_ != nullptr; }
    BpfProgram& program() { return *program_; }
    // The loaded program, or the load's own error (LaunchError: one line saying why).
    // Once done, without waiting for the thread to end: its exit (its stack
    // given back, a wake-up across CPUs) took ~0.5-0.7 ms of every run's start
    // here, in front of the adoption. The destructor joins it, by then off that path.
    std::unique_ptr<BpfProgram> take() {
        if (done_.load(std::memory_order_acquire))
            see();
        else
            join();
        if (error_) std::rethrow_exception(error_);
        return std::move(program_);
    }

private:
    void load() {
        try {
            program_ = BpfProgram::load(BpfProgram::Root::ForkedBefore);
        } catch (...) {
            error_ = std::current_exception();
        }
        done_.store(true, std::memory_order_release);
        // Again until seen: a signal landing just before the waiter's wait4 is
        // missed. Woken as soon as it is seen: the waiter's join does not wait.
        std::unique_lock<std::mutex> lock(mutex_);
        for (int i = 0; i < 1000 && !seen_; ++i) {
            ::pthread_kill(waiter_, SIGALRM);
            seen_changed_.wait_for(lock, std::chrono::milliseconds(2), [this] { return seen_; });
        }
    }
    void see() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            seen_ = true;
        }
        seen_changed_.notify_all();
    }

    std::thread thread_;
    pthread_t waiter_{};
    std::atomic<bool> done_{false};
    std::mutex mutex_;
    std::condition_variable seen_changed_;
    bool seen_ = false;  // under mutex_
    std::unique_ptr<BpfProgram> program_;
    std::exception_ptr error_;
};

}  // namespace max_rss::ebpf
