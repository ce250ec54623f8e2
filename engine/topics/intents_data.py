"""Training phrasings of the intent classifier (the evaluation set lives in the tests, apart).

Each intent has plain requests and requests wrapped around a subject; ``neutral`` holds topical
questions, including ones that contain an intent's trigger word as part of the subject
("context window", "compared to baseline", "a simple example of …" used as a noun).
"""

DEEPEN = """
go deeper into attention
give me more detail on the training loop
in depth please
elaborate on the fermentation step
can you expand on that
tell me more about tokenization
what exactly happens during prefill
how does the kv cache work internally
break down the decoding process step by step
dive into the retriever
drill down into the details of chunking
more details please
I want the fine print on rotary embeddings
zoom in on the feed-forward layer
explain the mechanics of levain in detail
what are the specifics of bulk fermentation
walk me through the internals
unpack how the reranker scores passages
be more specific about layer normalization
get into the nitty gritty of hydration
what happens under the hood when the model decodes
give me the technical details of multi-head attention
a detailed explanation of scaling laws please
keep going, deeper
deeper please
show me the subtopics of inference
explore the details of causal masking
I need a more thorough treatment of crampons
what are the finer points of shaping a loaf
elaborate further
more depth on the embedding step
explain each component of the transformer block
step by step, how is a query answered
what does each stage of the pipeline do
expand on the section about training data
go into more detail about altitude sickness
tell me everything about the starter
specifically, how is the loss computed
zoom into the sub-areas of retrieval
detail the steps of lamination
"""

BROADEN = """
give me the big picture
what is the overview here
high level summary please
in general, how does this all fit together
broaden the view
zoom out
what is the wider context of this
how does this fit into the whole
summarize the main ideas
summary of everything
step back and show the bigger picture
what is the general theme
what area does this belong to
which larger topic covers crampons
the overall landscape of retrieval please
what is the broader field
put this in perspective
how does this relate to the rest
from a bird's eye view
the forest, not the trees
what is the umbrella topic
give me the gist of the whole guide
overall, what are these notes about
what category is this part of
zoom out to the main topics
a high-level view of transformers
broadly speaking, what matters in baking
the main themes of the conversation
outline the whole subject
what is the bigger story
show me the parent topic
how does positional encoding fit in the bigger scheme
take a wider view of the hiking guide
a general overview of sourdough
summarise the big ideas of rag
what's the general idea behind all of this
I want the overall picture first
recap the essentials at a high level
tell me more about the overall structure
more about the big themes
tell me about the wider picture of hiking
the big picture of this, please
I'd like more on how it all fits together
"""

COMPARE = """
compare attention and recurrence
what is the difference between bm25 and dense retrieval
sourdough vs yeast bread
rotary versus learned positions
how is a levain different from a starter
alternatives to crampons
what other approaches exist for chunking
contrast prefill with decode
which is better, hybrid or dense
pros and cons of fine-tuning versus retrieval
how do these two methods differ
similarities between encoders and decoders
compare the options
other options besides reranking
what are the alternatives
how does it stack up against the others
side by side comparison of hiking boots and trail runners
is whole wheat flour different from rye
what distinguishes multi-head from single-head attention
weigh the tradeoffs between long context and retrieval
which one should I choose between these
compare sessions one and two
differences among the three model families
how does this differ from its siblings
similar topics to compare with
contrast the approaches
what sets bulk fermentation apart from proofing
tradeoffs of each alternative
the pros and cons of each
versus the other method
comparison of tokenizers
how do they compare
bpe or wordpiece, which is better
what changes between the two routes
the difference between a hut and a bivouac
"""

APPLY = """
where is this used
applications of attention
how do I apply retrieval augmented generation
give me an example
use cases for embeddings
how is this used in practice
real world examples of scaling laws
how to use a kv cache
when to use hybrid search
show me a practical example
how can I put this into practice
practical uses of sourdough discard
examples of where chunking matters
in real life, how is this used
apply this to my own project
what can I do with it
how would I use this at work
concrete examples please
hands-on usage
what problems does this solve in industry
put it to work
an example application of reranking
how do people use this day to day
where would I run into this
what is it good for
show it in action
practical applications of positional encoding
how do I implement this in a product
use it for a real task
real-world deployments of rag
which tools use this
example scenarios
how is this applied on a mountain trip
what recipes use this technique
"""

CLARIFY = """
I don't understand
I didn't understand that
this is unclear
can you clarify
what do you mean by that
I'm confused
explain it more simply
simpler please
a simple explanation of attention
in plain words please
explain like I'm five
I don't get it
I don't get how attention works
that makes no sense to me
can you rephrase
say it another way
I'm lost
what does that mean
I'm not following
help me understand the kv cache
clarify what a levain is
I'm confused about tokenization
this part about masking is unclear to me
explain in simpler terms
in layman's terms please
dumb it down
I still don't understand the loss
could you make it easier to understand
what is meant by hydration here
huh? what?
can you explain that again more clearly
I'm puzzled by rotary embeddings
not clear, try again
put it more plainly
I don't follow the part on scaling laws
"""

NEUTRAL = """
attention mechanism transformer training
how long should bulk fermentation take
what is a kv cache
contextual representations of words
context length of the model
the context window of llama
what is in context learning
when did Maya adopt Pepper
where does Daniel work
what did Maya paint last summer
how many nights a week does Maya work
what is the best flour for sourdough
positional encoding
what does the retriever return
when did Caroline go to the support group
what are the symptoms of altitude sickness
how much water for the starter
the transformer architecture
what did Daniel say about his trip
who is Tomas
why did the model hallucinate
what temperature should the oven be
chunk size for retrieval
scaling laws for language models
who watches Pepper during night shifts
what hiking boots should I buy
which hut did they stay in
the cost of attention
tokenization of rare words
what did Melanie do last weekend
how old is Pepper
what is the capital of France
when is the next session
rag evaluation metrics
model comparison benchmark results
results compared to baseline
the simple baseline
a summary statistic
the overview section
a detailed map of the trail
what does broaden mean
explain attention
what is retrieval augmented generation
what is sourdough
how does a starter rise
what causes oven spring
where did they go hiking
what gear did Maya pack
when did they move to Portland
how did the interview go
what is the name of the dog
what is a crampon
the deep learning course
deep learning
the different layers of the network
the big dipper
general relativity
a general purpose model
an example dataset
the application form deadline
what did she apply for
the confusion matrix
a clear sky forecast
a parent teacher meeting
sibling rivalry
more data beats better algorithms
tell me about the hike
what is layer normalization
how do retrieval systems rank passages
what is the hydration of the dough
what time did they meet
did Daniel like the bread
which model family is the largest
what is rope
how is a query embedded
what did Maya cook for dinner
how tall is the mountain
"""

PHRASINGS: dict[str, list[str]] = {
    name: [line.strip() for line in block.strip().splitlines() if line.strip()]
    for name, block in {"deepen": DEEPEN, "broaden": BROADEN, "compare": COMPARE, "apply": APPLY,
                        "clarify": CLARIFY, "neutral": NEUTRAL}.items()
}
